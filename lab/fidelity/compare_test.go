package fidelity

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompare(t *testing.T) {
	sim := Numbers{PerFlowGbps: map[string]float64{"a": 25, "b": 25}, PauseFrames: 100, XOffSeconds: 0.010}
	for _, tc := range []struct {
		name    string
		emu     Numbers
		wantBad int
	}{
		{"same", sim, 0},
		{"within", Numbers{PerFlowGbps: map[string]float64{"a": 28.7, "b": 21.3}, PauseFrames: 128, XOffSeconds: 0.0114}, 0},
		{"flow off", Numbers{PerFlowGbps: map[string]float64{"a": 29, "b": 25}, PauseFrames: 100, XOffSeconds: 0.010}, 1},
		// Frames get twice the tolerance (their cadence follows host jitter).
		{"frames off", Numbers{PerFlowGbps: map[string]float64{"a": 25, "b": 25}, PauseFrames: 69, XOffSeconds: 0.010}, 1},
		{"pause time off", Numbers{PerFlowGbps: map[string]float64{"a": 25, "b": 25}, PauseFrames: 100, XOffSeconds: 0.0084}, 1},
		{"missing flow", Numbers{PerFlowGbps: map[string]float64{"a": 25}, PauseFrames: 100, XOffSeconds: 0.010}, 1},
		{"extra flow", Numbers{PerFlowGbps: map[string]float64{"a": 25, "b": 25, "c": 1}, PauseFrames: 100, XOffSeconds: 0.010}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, bad := Compare(tc.emu, sim, 0.15)
			if len(bad) != tc.wantBad {
				t.Errorf("bad = %q, want %d lines", bad, tc.wantBad)
			}
			if want := max(len(tc.emu.PerFlowGbps), 2) + 2; len(lines) != want {
				t.Errorf("%d lines, want %d: %q", len(lines), want, lines)
			}
		})
	}
	if d := relDiff(0, 0); d != 0 {
		t.Errorf("relDiff(0, 0) = %v", d)
	}
	if diff := cmp.Diff([]string(nil), func() []string { _, b := Compare(Numbers{}, Numbers{}, 0.15); return b }()); diff != "" {
		t.Errorf("empty: %s", diff)
	}
}
