package flowsim

import (
	"math"
	"testing"
)

// TestMaxMin checks progressive filling against allocations worked out by
// hand.
func TestMaxMin(t *testing.T) {
	u := func(links ...int32) []Use {
		var out []Use
		for _, l := range links {
			out = append(out, Use{Link: l, Share: 1})
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		caps    []float64
		uses    [][]Use
		demands []float64
		want    []float64
	}{
		{"one flow one link", []float64{10}, [][]Use{u(0)}, nil, []float64{10}},
		// Three flows through one 12-unit link: 4 each.
		{"shared bottleneck", []float64{12, 100}, [][]Use{u(0), u(0, 1), u(0)}, nil, []float64{4, 4, 4}},
		// A and B share link 0 (10); B and C share link 1 (4): link 1
		// fills first at 2 (B, C frozen), A takes what B left on link 0.
		{"two bottlenecks", []float64{10, 4}, [][]Use{u(0), u(0, 1), u(1)}, nil, []float64{8, 2, 2}},
		// Parking lot: a long flow over links 0..2 (10 each), one short
		// flow per link: 5 each.
		{"parking lot", []float64{10, 10, 10}, [][]Use{u(0, 1, 2), u(0), u(1), u(2)}, nil, []float64{5, 5, 5, 5}},
		// Parking lot with a thin middle link (4): the long flow and the
		// middle flow get 2, the others fill their links.
		{"parking lot, thin middle", []float64{10, 4, 10}, [][]Use{u(0, 1, 2), u(0), u(1), u(2)}, nil, []float64{2, 8, 2, 8}},
		// A demand below the fair share frees capacity for the others.
		{"demand", []float64{12}, [][]Use{u(0), u(0), u(0)}, []float64{2, 0, 0}, []float64{2, 5, 5}},
		// A flow sprayed half and half over links 1 and 2 (10 each)
		// beside a flow on link 1 alone: link 1 carries r/2 + r = 10.
		{"sprayed", []float64{100, 10, 10}, [][]Use{{{0, 1}, {1, 0.5}, {2, 0.5}}, u(1)}, nil, []float64{20.0 / 3, 20.0 / 3}},
		// A flow on no link gets its demand.
		{"no links", []float64{10}, [][]Use{nil, u(0)}, []float64{3, 0}, []float64{3, 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make([]float64, len(tc.uses))
			MaxMin(tc.caps, tc.uses, tc.demands, got)
			for i := range got {
				if math.Abs(got[i]-tc.want[i]) > 1e-9*max(1, tc.want[i]) {
					t.Fatalf("rates %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestFillerReuse runs two problems on one filler: scratch from the first
// must not leak into the second.
func TestFillerReuse(t *testing.T) {
	var f filler
	r := make([]float64, 2)
	f.fill([]float64{10, 10}, [][]Use{{{0, 1}}, {{0, 1}, {1, 1}}}, nil, r)
	r2 := make([]float64, 1)
	f.fill([]float64{10, 10}, [][]Use{{{1, 1}}}, nil, r2)
	if r2[0] != 10 {
		t.Fatalf("second fill %v, want [10]", r2)
	}
}
