package main

import "fmt"

// slowScale is the scale factor k above which deploy warns: at k = 10,000
// one millisecond of fabric time takes ten seconds of wall clock.
const slowScale = 10000

// scaleWarning is deploy's sentence (for stderr) about a large scale
// factor k: how long fabric time takes on the wall clock and what would
// lower k. It is empty when k is not above slowScale. nodeGroups is the
// deploy's --node-groups (0: a process per node); scaleGiven says k came
// from --scale rather than auto.
func scaleWarning(k, nodeGroups int, scaleGiven bool) string {
	if k <= slowScale {
		return ""
	}
	var lower []string
	if scaleGiven {
		lower = append(lower, "a smaller --scale (auto picks the smallest k this machine keeps up with)")
	}
	if nodeGroups == 0 {
		lower = append(lower, "--node-groups 1 or 2 (the nodes share event loops: far less CPU per frame, so a smaller k)")
	}
	lower = append(lower, "a smaller topology (fewer hosts, GPUs or switches)")
	if !scaleGiven {
		lower = append(lower, "--scale N to force a smaller k (the nodes may then fall behind their dilated clock; rocelab inspect says by how much)")
	}
	return fmt.Sprintf("Note: the lab runs at scale factor k = %d, so 1 ms of fabric time takes %s of wall time (a 5 ms perf run takes %s); to lower k, try %s.",
		k, wallSeconds(k, 1), wallSeconds(k, 5), orList(lower))
}

// wallSeconds is how long ms milliseconds of fabric time take at scale k.
func wallSeconds(k, ms int) string {
	s := float64(k) * float64(ms) / 1000
	if s >= 120 {
		return fmt.Sprintf("%.1f min", s/60)
	}
	return fmt.Sprintf("%.3g s", s)
}
