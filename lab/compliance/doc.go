// Package compliance is the MetaRoCE compliance suite: black-box cases that
// check an implementation under test (IUT) against the numbered
// requirements of docs/metaroce-spec.md.
//
// The tester plays the IUT's peer on the wire: it builds and parses every
// frame with wire/ (and the MetaRoCE codecs of endpoint/), so it controls
// what it sends (reorder, drop, duplicate, corrupt the ICRC, mark CE, pause
// with PFC, answer or stay silent) and reads the clock of its Env. The IUT
// is driven through the Adapter operations (create a QP, connect it, post
// work requests, poll completions, read and write its buffer), which
// docs/compliance.md specifies as an HTTP/JSON protocol that rocelab's
// endpoint node speaks.
//
// Two Envs run the same cases: lab/compliance/inproc puts the reference
// endpoint on core/sim's virtual clock (fast, deterministic, in make test,
// and the home of the mutation test), lab/compliance/live reaches an
// endpoint node over a veth pair and AF_PACKET on the dilated wall clock.
//
// Every case cites the requirement IDs it checks; Validate refuses a
// registry in which a case cites an ID the specification lacks or a MUST
// has no case. Run filters cases by the IUT's mode (endpoint.Mode;
// rocev2: what any RoCEv2 RC endpoint must do; metaroce: that plus
// MetaRoCE) and by --case/--skip patterns, and returns a Report that prints as a table, JSON or JUnit, with
// a pcap of the exchange for every failed case.
package compliance
