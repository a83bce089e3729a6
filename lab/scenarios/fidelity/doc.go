// Package fidelity checks the emulation against the simulator: the same
// topology file and the same traffic, run once on real frames in the
// wall-clock lab (lab/emulation/control/deploy, lab/emulation/node) and once in virtual time
// (lab/simulation/simlab), must give the same numbers within a tolerance. This is
// the lab's fidelity check (docs/design.md, "one model, two clocks").
//
// Compare holds the rule: per-flow goodput, the time the switches'
// priority groups held an upstream in XOFF and named figures (a
// collective's busbw and time) within a tolerance of the simulator's (5 %
// for the laptop scenario files, 15 % for the 4:1 incast at k = 8000); the
// PFC frame count, whose cadence follows host jitter, within 15 % and 30 %
// (Compare's doc says why). The laptop files are emulated with exact links
// (deploy.Options.ExactLinks: frames carry their sender's lateness, so a
// sender's loop lag does not lengthen its links), the 4:1 incast without:
// both modes are checked.
//
// Two root tests run it: fidelity_linux_test.go (a 4:1 incast with PFC on
// one 100G switch, testdata/incast4.yaml) and run_linux_test.go (scenario
// files on the shipped laptop topology, run as the CLI runs them).
//
// See docs/design.md, "The fidelity check (lab/scenarios/fidelity)", for
// the scenario files, and what both drivers are made to do alike.
package fidelity
