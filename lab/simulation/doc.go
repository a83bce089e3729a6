// Package simulation groups the virtual-time driver: the whole fabric —
// switch models, NIC models, links, faults — in one process on core/sim's
// discrete-event engine, deterministic for a seed, with no root and no
// sockets.
//
//   - simlab: builds a lab from a topology and runs workloads on it (the
//     engine behind `rocelab run --sim`);
//   - simbench: the simulator at data-center scale (`make bench-sim`).
package simulation
