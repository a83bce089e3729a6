// Package deploy turns a resolved topology into a running emulation lab and
// takes it down again: the orchestration behind `rocelab deploy`,
// `destroy`, `inspect` and `exec`.
//
// Deploy works in steps (namespaces or containers, veth links, front-end
// addresses, node configs and processes, health), each recorded in the
// lab's state file before it acts (package state, write-ahead), and rolls
// everything back (package lifecycle) when a step fails or the context is
// cancelled. Destroy is idempotent, and Destroy and DestroyAll also find
// what a lab whose state is gone left behind. The sandbox a node runs in
// is chosen by Options.Runtime (netns or docker; runtimes.go maps a
// recorded runtime name to one); with Options.Scale 0 the lab picks its
// scale k (AutoScale) and records it.
//
// A lab's run directory holds, besides the state file and its lock, per
// process node NODE.json (its config), NODE.sock (its API) and NODE.log
// (its stdout and stderr), and lab.json, the Lab that Deploy returned,
// which Inspect and Exec read.
//
// See docs/design.md, "Deploying a lab (lab/emulation/control/deploy)",
// for the steps, one state write per step, the docker runtime and user
// containers, and time dilation; docs/performance.md, "Measurements from
// package docs", for the figures behind the constants in scale.go.
package deploy
