// Package jobs runs work on a live lab: the one home of what the CLI, the
// scenario runner and the demo do to a deployed lab's nodes through their
// API (package nodeapi).
//
//   - Lab reaches a deployed lab by name: NIC resolves "host[:gpuN]" to a
//     back-end NIC of a running endpoint node, AllNICs lists them, Explain
//     and Behind say what the lab's health finds wrong;
//   - perf: a Flow is created and connected (Connect, in the simulator's
//     QP order), run (Run: server and client jobs, progress, a stall watch,
//     a clean stop) and deleted; RunPerf does all three under a lease;
//   - collectives: RunCollective connects the ranks that talk, sets up and
//     starts each node's share, then drives the barriers to the end;
//   - faults: Faults is the lab's fault placer (faults.Placer): a target
//     resolves on the lab's topology and each node builds and runs the
//     fault on its own ports; FabricClock runs a faults.Schedule on the
//     lab's scaled wall clock.
//
// Every run owns its QPs under a lease (OwnerLease) that the nodes honour
// when the run's process dies; a run that sees no progress for its stall
// time stops with ErrStalled. An error in what the user named is an
// *InputError.
package jobs
