// Package fidelity checks the emulation against the simulator: the same
// topology file and the same traffic, run once on real frames in the
// wall-clock lab (lab/deploy, lab/node) and once in virtual time
// (lab/simlab), must give the same numbers within a tolerance. This is
// the lab's fidelity check (DESIGN.md, "one model, two clocks").
//
// Compare holds the rule; the root test (fidelity_linux_test.go) runs a
// 4:1 incast with PFC both ways and compares per-flow throughput and the
// PFC the switches sent (time in XOFF within the tolerance; frame counts,
// whose cadence follows host jitter, within twice it).
package fidelity
