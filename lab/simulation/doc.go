// Package simulation groups the virtual-time driver: the whole fabric —
// switch models, NIC models, links, faults — in one process on core/sim's
// discrete-event engine, deterministic for a seed, with no root and no
// sockets.
//
//   - simlab: builds a lab from a topology and runs workloads on it (the
//     engine behind `rocelab run --sim`);
//   - flowsim: the flow-level mode (`rocelab run --sim --flow`): flows as
//     max-min fair rates over the paths the same switch models route;
//   - simbench: the simulator at data-center scale (`make bench-sim`).
package simulation
