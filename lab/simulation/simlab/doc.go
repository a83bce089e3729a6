// Package simlab is rocelab's simulator driver for a whole topology: the
// base of `rocelab run --sim` and of the emulation-versus-simulation
// fidelity check.
//
// Build turns a resolved topology into a running discrete-event lab on one
// sim.Engine: the switches and links of fabric.BuildSim, an endpoint.NIC on
// every back-end NIC of every host (named "host:port", e.g. "host1:gpu0",
// with the address, MAC and rate of the addressing plan), and a counting IP
// sink on every front-end NIC. Random streams are named as the emulation
// names them ("switch/"+name for switches, "nic/"+name for NICs), so a seed
// means the same thing in both drivers.
//
// Jobs are event-driven on the engine and may be added before Run or while
// the lab runs: Perf (perftest-style streams between NICs, with per-flow
// goodput and per-message completion times), Incast (Perf from many to
// one, with IncastReport for the fidelity check) and Collective (NCCL-style
// collectives over RDMA, when a collective.Transport adapter is given).
//
// Run advances fabric time; RunUntilIdle runs until every job finished (or
// nothing is left to do). Samples gathers the telemetry of switches, NICs
// and jobs. A Sampler records chosen gauges and counters every interval of
// fabric time into a Store of Series whose memory is bounded: each series
// keeps at most a fixed number of points, merging neighbours as time goes
// on, and exact running totals (count, sum, min, max, last).
package simlab
