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
// Two root tests run it (testenv.RequireRoot: they fail in CI without
// root; testenv.Exclusive: one timing-sensitive test on the machine at a
// time):
//
//   - fidelity_linux_test.go: a 4:1 incast with PFC on one 100G switch
//     (testdata/incast4.yaml), driving lab/emulation/node and lab/simulation/simlab directly.
//   - run_linux_test.go: scenario files on the shipped laptop topology
//     (topologies/laptop.yaml) run as the CLI runs them — run.Emulate
//     (`rocelab run FILE`) against run.Sim with Options.MatchEmulation
//     (`rocelab run --sim --match-emulation FILE`):
//     testdata/laptop-incast.yaml (3 GPUs of rack 1 write into one of
//     rack 2; ECMP puts the three flows on one RTSW uplink, which pauses
//     the hosts), testdata/laptop-permutation.yaml (every GPU writes to
//     its peer in the other rack; ECMP collisions on the uplinks and the
//     CTSW downlinks pause hosts and switches) and
//     testdata/laptop-alltoall.yaml (all-to-all over the 8 GPUs; busbw
//     and time per size). TestLaptopScenariosSimulated checks without
//     root that each still crosses the spine and, where meant to, pauses.
//
// Both make the simulator run the emulated switches' configuration,
// including the PFC headroom lab/emulation/node adds for loop stalls at the lab's
// scale, and take a timed perf flow's goodput as both drivers measure it:
// what completed (the endpoint node, as perftest -D) or arrived (the
// simulator) within its window, over the window. lab/scenarios/run also gives
// perf QPs one tx depth in both drivers (run.PerfTxDepth) and creates the
// emulated QPs in flow order, as the simulator does: a QP's number picks
// its UDP source port and so its ECMP path.
package fidelity
