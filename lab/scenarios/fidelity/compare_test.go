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
		{"figure only in emu", Numbers{PerFlowGbps: map[string]float64{"a": 25, "b": 25}, PauseFrames: 100, XOffSeconds: 0.010,
			Figures: map[string]float64{"busbw": 300}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, bad := Compare(tc.emu, sim, 0.15)
			if len(bad) != tc.wantBad {
				t.Errorf("bad = %q, want %d lines", bad, tc.wantBad)
			}
			if want := max(len(tc.emu.PerFlowGbps), 2) + len(tc.emu.Figures) + 2; len(lines) != want {
				t.Errorf("%d lines, want %d: %q", len(lines), want, lines)
			}
		})
	}
	// Figures are compared at the tolerance, both ways.
	simColl := Numbers{Figures: map[string]float64{"busbw 4MiB (Gb/s)": 280, "time 4MiB (us)": 105}}
	for _, tc := range []struct {
		name    string
		figures map[string]float64
		wantBad int
	}{
		{"within", map[string]float64{"busbw 4MiB (Gb/s)": 245, "time 4MiB (us)": 120}, 0},
		{"busbw low", map[string]float64{"busbw 4MiB (Gb/s)": 230, "time 4MiB (us)": 120}, 1},
		{"time high", map[string]float64{"busbw 4MiB (Gb/s)": 280, "time 4MiB (us)": 125}, 1},
		{"missing", map[string]float64{"busbw 4MiB (Gb/s)": 280}, 1},
	} {
		t.Run("figures/"+tc.name, func(t *testing.T) {
			_, bad := Compare(Numbers{Figures: tc.figures}, simColl, 0.15)
			if len(bad) != tc.wantBad {
				t.Errorf("bad = %q, want %d lines", bad, tc.wantBad)
			}
		})
	}
	// A few pauses against none: inside the floors, not past them.
	for _, tc := range []struct {
		name           string
		frames, xoffUs float64
		wantBad        int
	}{
		{"stall pauses", 12, 17, 0},
		{"at the floors", framesFloor, 1e6 * xoffFloor, 0},
		{"too many frames", framesFloor + 1, 17, 1},
		{"too long", 12, 1e6*xoffFloor + 1, 1},
	} {
		t.Run("floor/"+tc.name, func(t *testing.T) {
			_, bad := Compare(Numbers{PauseFrames: tc.frames, XOffSeconds: tc.xoffUs / 1e6}, Numbers{}, 0.15)
			if len(bad) != tc.wantBad {
				t.Errorf("bad = %q, want %d lines", bad, tc.wantBad)
			}
		})
	}
	// CompareFrames: the frame count's own tolerance, apart from tol.
	for _, tc := range []struct {
		name          string
		frames        float64
		tol, framesTo float64
		wantBad       int
	}{
		{"within its own", 1000 * 1.18, 0.05, 0.20, 0},
		{"past its own", 1000 * 1.22, 0.05, 0.20, 1},
		{"not held to tol", 1000 * 1.10, 0.05, 0.20, 0},
	} {
		t.Run("frames/"+tc.name, func(t *testing.T) {
			sim := Numbers{PauseFrames: 1000, XOffSeconds: 1e-3}
			_, bad := CompareFrames(Numbers{PauseFrames: tc.frames, XOffSeconds: 1e-3}, sim, tc.tol, tc.framesTo)
			if len(bad) != tc.wantBad {
				t.Errorf("bad = %q, want %d lines", bad, tc.wantBad)
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
