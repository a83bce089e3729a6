package run

import (
	"context"
	"fmt"

	"github.com/rocelab/rocelab/lab/scenarios/scenario"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
)

// Behind is how far an emulated run's node loops fell behind the dilated
// clock. A loop that runs a turn late runs that turn's fabric time at
// once; frames between processes (veths) are then read after they were
// due and delivered late (emu_rx_late_frames_total), and a late switch's
// pauses are late wherever they go — which is how a busy machine made
// lossless classes drop while every node said ok. Links inside one loop
// (a lab in one process) are exact whatever the loop's lateness.
type Behind struct {
	// Behind is the verdict: the run's measurements are not the fabric's.
	Behind bool `json:"behind"`
	// LateFrames of RxFrames (frames between processes) were read after
	// they were due, LateBy in all (fabric time); WorstNode read most.
	LateFrames int64          `json:"late_frames"`
	RxFrames   int64          `json:"rx_frames"`
	LateBy     clock.Duration `json:"late_by_ps"`
	WorstNode  string         `json:"worst_node,omitempty"`
	// MaxLag is the worst batch lateness of any loop (fabric time).
	MaxLag clock.Duration `json:"max_lag_ps"`
	// Scale is the run's k; Suggest a k that would likely have kept up.
	Scale   int `json:"scale"`
	Suggest int `json:"suggest_scale,omitempty"`
}

// Tolerances of the verdict. A loop reads some frames after they were due
// even on an idle machine (its timers fire late): measured on example 01
// with a process per node at k = 1000, 2-core machine, idle: 4 % of the
// frames, 39 ns late per frame on average, worst batch lag 4.4 µs; with
// six nice-0 CPU hogs beside it: 10 %, 132 ns, 10.4 µs, and the same
// results. A run is behind when its frames were late by more than
// meanLateMax on average — more than half a 4 KiB frame's serialization
// at 100G, past which a late pause or ACK no longer lands within the
// frame it was meant for — or when a loop ran a batch more than maxLagMax
// late, a whole PFC reaction time of a rack.
// The nodes judge their live state with the same tolerances (emu).
const (
	meanLateMax = emu.BehindMeanLate
	maxLagMax   = emu.BehindMaxLag
)

// behindOf reads the loops' counters in a run's final telemetry.
func behindOf(final []telemetry.Sample, scale int) Behind {
	b := Behind{Scale: scale}
	perNode := map[string]int64{}
	for _, s := range final {
		switch s.Name {
		case "emu_rx_late_frames_total":
			b.LateFrames += int64(s.Value)
			perNode[s.Label("node")] += int64(s.Value)
		case "emu_rx_late_seconds_total":
			b.LateBy += clock.Duration(s.Value * float64(clock.Second))
		case "emu_rx_frames_total":
			b.RxFrames += int64(s.Value)
		case "emu_rx_inloop_frames_total":
			b.RxFrames -= int64(s.Value) // exact: not the loops' timing
		case "emu_batch_lag_seconds":
			if s.Label("clock") == "fabric" && s.Label("quantile") == "1" {
				b.MaxLag = max(b.MaxLag, clock.Duration(s.Value*float64(clock.Second)))
			}
		}
	}
	var worst int64
	for n, v := range perNode {
		if v > worst || v == worst && n < b.WorstNode {
			worst, b.WorstNode = v, n
		}
	}
	if worst == 0 {
		b.WorstNode = ""
	}
	// A lab whose frames all crossed in memory is exact however late its
	// loop ran: only frames between processes make it behind.
	b.Behind = b.RxFrames > 0 && (b.LateBy > meanLateMax*clock.Duration(b.RxFrames) || b.MaxLag > maxLagMax)
	if b.Behind {
		b.Suggest = 2 * scale
	}
	return b
}

// String is the verdict in a sentence.
func (b Behind) String() string {
	what := fmt.Sprintf("%d of %d frames between processes read after they were due (%v late in all, %v per frame), worst batch lag %v",
		b.LateFrames, b.RxFrames, b.LateBy, b.LateBy/clock.Duration(max(b.RxFrames, 1)), b.MaxLag)
	if b.WorstNode != "" {
		what += ", most at " + b.WorstNode
	}
	if !b.Behind {
		return "on time: " + what
	}
	return fmt.Sprintf("behind at k = %d: %s; the machine did not keep up with the dilated clock, so the fabric's measurements are not trustworthy (k = %d would likely keep up: --scale %d, or --retry-behind)", b.Scale, what, b.Suggest, b.Suggest)
}

// EmulateKeepingUp runs sc as Emulate does and, while the run's lab fell
// behind its dilated clock, runs it again at the k its verdict suggests,
// up to retries times; retrying, if set, hears of each rerun. The outcome
// is the last run's: still behind if every run was.
func EmulateKeepingUp(ctx context.Context, sc *scenario.Scenario, opts EmuOptions, retries int, retrying func(from, to int)) (*Outcome, error) {
	out, err := Emulate(ctx, sc, opts)
	for try := 0; try < retries && err == nil && out.Behind != nil && out.Behind.Behind; try++ {
		opts.Scale = out.Behind.Suggest
		if retrying != nil {
			retrying(out.Behind.Scale, opts.Scale)
		}
		out, err = Emulate(ctx, sc, opts)
	}
	return out, err
}
