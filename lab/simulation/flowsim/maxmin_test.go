package flowsim

import (
	"math"
	"testing"

	"github.com/rocelab/rocelab/core/sim"
)

// TestMaxMin checks progressive filling against allocations worked out by
// hand, and the Net's rates for the same flows (no demands).
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
		// Two bottlenecks in series: A crosses links 0 (10) and 1 (6), B
		// only 0, C only 1. Link 1 fills first at 3 (A, C); B takes the
		// 7 A leaves on link 0.
		{"two bottlenecks in series", []float64{10, 6}, [][]Use{u(0, 1), u(0), u(1)}, nil, []float64{3, 7, 3}},
		// The same chain one link longer, thinnest at its end: A over
		// 0, 1, 2 (12, 9, 4) with one flow more on each: link 2 fills at
		// 2, then link 1 gives its other flow 7, link 0 its other 10.
		{"three in series", []float64{12, 9, 4}, [][]Use{u(0, 1, 2), u(0), u(1), u(2)}, nil, []float64{2, 10, 7, 2}},
		// A flow sprayed over two parallel bottlenecks (links 1 and 2,
		// 6 each; half its rate on each) against one flow on each: each
		// link carries r/2 + s = 6 with r = s (all rise together): 4.
		{"sprayed over two bottlenecks", []float64{100, 6, 6}, [][]Use{{{0, 1}, {1, 0.5}, {2, 0.5}}, u(1), u(2)}, nil, []float64{4, 4, 4}},
		// Uneven spraying: 3/4 of A on link 1, 1/4 on link 2 (8 each),
		// B on link 1: 0.75r + r = 8 at r = 32/7; link 2 then lets A
		// rise no further, as A is frozen.
		{"uneven spray", []float64{100, 8, 8}, [][]Use{{{0, 1}, {1, 0.75}, {2, 0.25}}, u(1)}, nil, []float64{32.0 / 7, 32.0 / 7}},
		// Demands above the fair share do not bind; below it they free
		// capacity in order: 1 and 2 met, the last takes 9.
		{"demands, some met", []float64{12}, [][]Use{u(0), u(0), u(0)}, []float64{1, 2, 50}, []float64{1, 2, 9}},
		// Every demand met: the link is left part idle.
		{"demands, all met", []float64{12}, [][]Use{u(0), u(0)}, []float64{3, 4}, []float64{3, 4}},
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
			if tc.demands != nil {
				return // the Net's flows have no demands
			}
			// The same flows as QPs of a Net (capacities in Gb/s), each
			// with a long message posted: their rates once it has solved
			// (incrementally).
			e := sim.New(1)
			caps := make([]float64, len(tc.caps))
			for i, c := range tc.caps {
				caps[i] = c * 1e9
			}
			n := NewNet(e, caps)
			var qps []*QP
			for _, us := range tc.uses {
				q := n.NewQP([][]Use{us}, 0, 0)
				q.Post(1<<20, nil, nil)
				qps = append(qps, q)
			}
			e.RunUntil(1)
			for i, q := range qps {
				if math.Abs(q.Rate()/1e9-tc.want[i]) > 1e-9*max(1, tc.want[i]) {
					t.Fatalf("Net: QP %d at %g, want %v", i, q.Rate(), tc.want)
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
