// Package simbench is the simulator at data-center scale: generated
// topologies of thousands of NICs (a three-tier Clos of 1,024 hosts, a
// 2,048-GPU multi-zone cluster), the workloads run on them (permutation
// traffic, ring all-reduce across every GPU) and the figures `make
// bench-sim` reports: wall time, data packets simulated per wall-second,
// events per second, peak RSS, and per-flow completion times against the
// ideal.
//
// Topologies are generated in code from the multi-zone generator of
// package topologies, so no large file lives in the repository. Every run
// is payload-free (simlab.Options.Raw false) and deterministic: the same
// seed gives byte-identical result tables (Result.Digest).
//
// Spraying. Switch-level per-packet spraying (profile ecmp.spray) reorders
// packets of one QP within a path, which MetaRoCE reads as loss (it assumes
// per-path FIFO, see endpoint/doc.go). The "spray" variant of the
// permutation therefore uses MetaRoCE NIC multipath: each flow is split
// over QPs queue pairs that each spray over Paths UDP source ports (4 × 64
// in `make bench-sim`), each a FIFO ECMP path, so the switches stay
// single-path ECMP while a flow's packets spread evenly over the core.
package simbench
