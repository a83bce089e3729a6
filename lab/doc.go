// Package lab holds rocelab's two drivers of the same models, grouped by the
// clock they run on, and the scenario front end that drives either:
//
//   - lab/emulation: the wall clock, dilated by a scale factor. Real network
//     namespaces or containers, veth links, frames on AF_PACKET sockets, one
//     node process per switch and endpoint, lifecycle and state, deploy,
//     jobs against a live lab, stats and the guided demo, in floors
//     (base, datapath, node, control, jobs, tools);
//   - lab/cluster: labs that span machines, built over the emulation: the
//     per-machine agent, its API, and the Kubernetes resource and
//     controller;
//   - lab/simulation: virtual time on core/sim's event engine. The whole
//     fabric in one process (simlab), deterministic per seed, and the
//     data-center-scale benchmark (simbench);
//   - lab/scenarios: scenario files (workloads, faults, expectations), the
//     runs that play them on either driver, reports, and the fidelity check
//     that compares the two clocks;
//   - lab/compliance: the MetaRoCE compliance suite (rocelab compliance):
//     cases that play the peer on the wire against an implementation under
//     test, in process on the virtual clock (inproc) or over a veth pair to
//     an endpoint node (emu).
//
// The emulation and the simulation never import each other; lab/cluster,
// lab/scenarios and lab/compliance sit above them (internal/floors keeps
// it so).
package lab
