// Package live runs the compliance suite against a live rocelab endpoint
// node in emulation: the IUT is a real `rocelab node` process (the endpoint node a
// lab runs on every host) in a network namespace of its own, with one port
// on a veth pair whose other end is the tester's, in a second namespace.
// The tester reads and writes raw frames on its end with an AF_PACKET
// socket (package afpacket; offloads are off on both ends, package links)
// and drives the node through the adapter routes of its API socket
// (docs/compliance.md; nodeapi.Client).
//
// The node runs dilated by a scale k (Options.Scale); the Env reports time
// in fabric units from the kernel's receive stamps, and Env.Jitter, the
// host's scheduling jitter in fabric time, widens the cases' timing bounds.
// Start sets up the namespaces, the veth pair and the node once per run;
// each case gets a fresh Env over it, cleaned up on Close. IUT.Close stops
// the node and removes everything Start created, also after a failure.
//
// docs/design.md, "Compliance in emulation (lab/compliance/live)", has the
// time and one-node-many-cases rules in full.
package live
