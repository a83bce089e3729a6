package fidelity

import (
	"fmt"
	"math"
	"slices"
)

// Numbers are what one run of a scenario measured: each flow's goodput in
// Gb/s (keyed by sender NIC, or by "from->to"), the PFC frames the
// switches sent and the time their priority groups held an upstream in
// XOFF (seconds, summed), and further figures by name (a collective's
// busbw and time per size), compared like the goodputs.
type Numbers struct {
	PerFlowGbps map[string]float64
	PauseFrames float64
	XOffSeconds float64
	Figures     map[string]float64
}

// Compare checks emu against sim within tol (0.15 = 15 %, relative to
// the simulator's value) and returns one line per quantity, in a stable
// order, and the lines of the quantities out of tolerance. A sender or
// figure present in only one of them is out of tolerance.
//
// The PFC frame count gets twice tol. It follows the XOFF/XON cadence,
// which host jitter shifts while the paused time stays put: on the 4:1
// incast, 1,329–1,825 emulated against 1,445 simulated over runs on a
// loaded 2-core VM. A paused PG cycles XOFF → drain → XON → refill with a
// period set by the PFC loop's delay (in the simulator about 5 µs at 400G
// with 1 µs links: ~100 cycles per port in the laptop incast); the
// emulation adds to that loop the lateness of a loop the host kept
// waiting (the "oldest frame delivered … in the past" of the tests'
// output, 0.2–12 µs of fabric time), so cycles get longer and fewer while
// the fraction of time in XOFF, set by the rates, stays. The laptop
// permutation at scale 10000 (loops up to 12 µs late) sent 301–453
// frames against the simulator's 500 with its XOFF time within 5 %; at
// 20000 (half the lateness in fabric time) it stays within 4 %.
//
// XOFF time and frame counts also agree when they differ by no more than
// xoffFloor and framesFloor: a host stall that outlasts the emulated
// switches' lag allowance (the loop of one node held 253 ms of wall time
// on a loaded machine) makes the emulation pause a dozen times, for tens
// of µs of fabric time, in a run the simulator never pauses; against a
// simulated 0 any relative tolerance fails, though the run's figures are
// otherwise unmoved.
func Compare(emu, sim Numbers, tol float64) (lines, bad []string) {
	return CompareFrames(emu, sim, tol, 2*tol)
}

// CompareFrames is Compare with the PFC frame count's tolerance given
// apart (framesTol) instead of twice tol.
func CompareFrames(emu, sim Numbers, tol, framesTol float64) (lines, bad []string) {
	rel, floor := tol, 0.0
	check := func(name string, e, s float64, okE, okS bool) {
		var line string
		switch {
		case !okE || !okS:
			line = fmt.Sprintf("%-22s emu %10.2f (%v)  sim %10.2f (%v)  missing", name, e, okE, s, okS)
			bad = append(bad, line)
		default:
			d := relDiff(e, s)
			line = fmt.Sprintf("%-22s emu %10.2f  sim %10.2f  diff %+6.1f%%", name, e, s, 100*d)
			if math.Abs(d) > rel && math.Abs(e-s) > floor {
				bad = append(bad, line)
			}
		}
		lines = append(lines, line)
	}
	for _, k := range keys(emu.PerFlowGbps, sim.PerFlowGbps) {
		e, okE := emu.PerFlowGbps[k]
		s, okS := sim.PerFlowGbps[k]
		check(k+" Gb/s", e, s, okE, okS)
	}
	for _, k := range keys(emu.Figures, sim.Figures) {
		e, okE := emu.Figures[k]
		s, okS := sim.Figures[k]
		check(k, e, s, okE, okS)
	}
	floor = 1e3 * xoffFloor
	check("XOFF time (ms)", 1e3*emu.XOffSeconds, 1e3*sim.XOffSeconds, true, true)
	rel, floor = framesTol, framesFloor
	check("PFC frames", emu.PauseFrames, sim.PauseFrames, true, true)
	return lines, bad
}

// The absolute differences in XOFF time (seconds) and PFC frames that
// Compare accepts whatever the relative difference (see Compare).
const (
	xoffFloor   = 50e-6
	framesFloor = 20
)

// keys returns the keys of a and b, sorted, without repeats.
func keys[V any](a, b map[string]V) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// relDiff is (e − s)/s; equal values (zeros included) are 0 apart, and
// anything against a zero simulator value is infinitely far.
func relDiff(e, s float64) float64 {
	if e == s {
		return 0
	}
	if s == 0 {
		return math.Inf(1)
	}
	return (e - s) / s
}
