package fidelity

import (
	"fmt"
	"math"
	"slices"
)

// Numbers are what one run of an incast measured: each sender's goodput
// in Gb/s (keyed by sender NIC), the PFC frames the switches sent and the
// time their priority groups held an upstream in XOFF (seconds, summed).
type Numbers struct {
	PerFlowGbps map[string]float64
	PauseFrames float64
	XOffSeconds float64
}

// Compare checks emu against sim within tol (0.15 = 15 %, relative to
// the simulator's value) and returns one line per quantity, in a stable
// order, and the lines of the quantities out of tolerance. A sender
// present in only one of them is out of tolerance.
func Compare(emu, sim Numbers, tol float64) (lines, bad []string) {
	check := func(name string, e, s float64, okE, okS bool) {
		var line string
		switch {
		case !okE || !okS:
			line = fmt.Sprintf("%-22s emu %10.2f (%v)  sim %10.2f (%v)  missing", name, e, okE, s, okS)
			bad = append(bad, line)
		default:
			d := relDiff(e, s)
			line = fmt.Sprintf("%-22s emu %10.2f  sim %10.2f  diff %+6.1f%%", name, e, s, 100*d)
			if math.Abs(d) > tol {
				bad = append(bad, line)
			}
		}
		lines = append(lines, line)
	}
	var keys []string
	for k := range emu.PerFlowGbps {
		keys = append(keys, k)
	}
	for k := range sim.PerFlowGbps {
		if _, ok := emu.PerFlowGbps[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		e, okE := emu.PerFlowGbps[k]
		s, okS := sim.PerFlowGbps[k]
		check(k+" Gb/s", e, s, okE, okS)
	}
	check("XOFF time (ms)", 1e3*emu.XOffSeconds, 1e3*sim.XOffSeconds, true, true)
	// The frame count follows the XOFF/XON cadence, which host jitter
	// shifts (1,329–1,825 emulated against 1,445 simulated over runs on a
	// loaded 2-core VM) while the paused time stays put: frames get twice
	// the tolerance.
	frameTol := tol
	tol *= 2
	check("PFC frames", emu.PauseFrames, sim.PauseFrames, true, true)
	tol = frameTol
	return lines, bad
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
