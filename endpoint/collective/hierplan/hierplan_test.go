package hierplan

import (
	"slices"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint/collective"
)

// TestPlan checks the phases of hand-worked plans: which ranks ring
// together at each level, on what size, and the NVLink step's wait.
func TestPlan(t *testing.T) {
	type phase struct {
		op     collective.Op
		size   int64
		rings  [][]int // nil for NVLink
		bucket Bucket
	}
	rs, ar, ag := collective.ReduceScatter, collective.AllReduce, collective.AllGather
	nv := 3600 * clock.Gbps
	for _, tc := range []struct {
		name string
		spec Spec
		n    int
		want []phase
		wait clock.Duration // of the NVLink phases
	}{
		{"groups of 2 over 4", Spec{GroupSize: 2, Size: 64}, 4, []phase{
			{rs, 64, [][]int{{0, 1}, {2, 3}}, ReduceScatter},
			{ar, 32, [][]int{{0, 2}, {1, 3}}, AllReduce},
			{ag, 64, [][]int{{0, 1}, {2, 3}}, AllGather},
		}, 0},
		{"groups of 2, racks of 2, over 8", Spec{GroupSize: 2, Levels: []int{2}, Size: 64}, 8, []phase{
			{rs, 64, [][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}}, ReduceScatter},
			{rs, 32, [][]int{{0, 2}, {1, 3}, {4, 6}, {5, 7}}, ReduceScatter},
			{ar, 16, [][]int{{0, 4}, {1, 5}, {2, 6}, {3, 7}}, AllReduce},
			{ag, 32, [][]int{{0, 2}, {1, 3}, {4, 6}, {5, 7}}, AllGather},
			{ag, 64, [][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}}, AllGather},
		}, 0},
		{"NVLink groups of 4 over 8", Spec{GroupSize: 4, NVLink: nv, Size: 4 << 20}, 8, []phase{
			{size: 0, bucket: ReduceScatter},
			{ar, 1 << 20, [][]int{{0, 4}, {1, 5}, {2, 6}, {3, 7}}, AllReduce},
			{size: 0, bucket: AllGather},
		}, 3 * (clock.Microsecond + nv.Serialize(1<<20))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.spec
			if err := s.Check(tc.name, tc.n); err != nil {
				t.Fatal(err)
			}
			got := Plan(s, tc.n)
			if len(got) != len(tc.want) {
				t.Fatalf("%d phases, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Bucket != w.bucket || !slices.EqualFunc(g.Rings, w.rings, slices.Equal) {
					t.Errorf("phase %d: bucket %d rings %v, want %d %v", i, g.Bucket, g.Rings, w.bucket, w.rings)
				}
				if w.rings == nil {
					if g.Wait != tc.wait {
						t.Errorf("phase %d: NVLink wait %v, want %v", i, g.Wait, tc.wait)
					}
					continue
				}
				if g.Op != w.op || g.Size != w.size {
					t.Errorf("phase %d: %v of %d B, want %v of %d B", i, g.Op, g.Size, w.op, w.size)
				}
			}
		})
	}
}

// TestCheck checks the defaults, the rounding of the size and the
// refusals.
func TestCheck(t *testing.T) {
	s := Spec{Levels: []int{4}, Size: 1000}
	if err := s.Check("x", 64); err != nil {
		t.Fatal(err)
	}
	if s.GroupSize != 8 || s.Size != 896 { // a multiple of 4 × 8 × 4
		t.Errorf("defaults: group %d size %d", s.GroupSize, s.Size)
	}
	for _, bad := range []struct {
		s Spec
		n int
	}{
		{Spec{GroupSize: 3}, 8},                    // not whole groups
		{Spec{GroupSize: 8}, 8},                    // one group
		{Spec{GroupSize: 8, Levels: []int{3}}, 32}, // not whole units
		{Spec{GroupSize: 8, Levels: []int{4}}, 32}, // one unit
		{Spec{GroupSize: 2, Levels: []int{1}}, 8},  // a level of 1
		{Spec{GroupSize: 8, Size: 16}, 16},         // under 4 B a rank
	} {
		if err := bad.s.Check("x", bad.n); err == nil {
			t.Errorf("%+v over %d accepted", bad.s, bad.n)
		}
	}
}

// TestResult checks nccl-tests' figures: busbw = algbw × 2(n−1)/n.
func TestResult(t *testing.T) {
	r := NewResult(Spec{GroupSize: 2, Size: 1e6}, 4, [3]clock.Duration{clock.Microsecond, 2 * clock.Microsecond, clock.Microsecond})
	if r.Time != 4*clock.Microsecond || r.AlgBW != 250 || r.BusBW != 375 {
		t.Errorf("%+v", r)
	}
	if got := r.NCCL(); len(got) != 1 || got[0].BusBW != 375 || got[0].Op != "hier_all_reduce" {
		t.Errorf("NCCL %+v", got)
	}
	if (Result{}).NCCL() != nil {
		t.Error("a zero result has a line")
	}
}
