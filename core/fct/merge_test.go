package fct

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
)

// nearestRank is the q-quantile of all by nearest rank (as expectations
// compute it).
func nearestRank(all []clock.Duration, q float64) clock.Duration {
	s := slices.Clone(all)
	slices.Sort(s)
	return s[max(int(math.Ceil(q*float64(len(s))))-1, 0)]
}

// TestDistMerge merges flows of different lengths and compares the
// union's quantiles with the exact ones: exact while small, within 1%
// once histogrammed.
func TestDistMerge(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int
		exact bool
	}{
		{"empty", nil, true},
		{"small", []int{10, 1, 100}, true},
		{"just-exact", []int{exactValues / 2, exactValues / 2}, true},
		{"over", []int{exactValues, 1}, false},
		{"long-and-short", []int{3 * exactValues, 17, 2 * exactValues}, false},
		{"many-flows", slices.Repeat([]int{100}, 200), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			var union Dist
			var all []clock.Duration
			for i, n := range tc.sizes {
				var d Dist
				for range n {
					v := clock.Duration(rng.ExpFloat64() * float64(clock.Duration(i+1)*20*clock.Microsecond))
					d.Add(v)
					all = append(all, v)
				}
				union.Merge(&d)
			}
			union.Merge(nil)
			if union.Count() != int64(len(all)) {
				t.Fatalf("count %d, want %d", union.Count(), len(all))
			}
			if len(all) == 0 {
				if union.Quantile(0.99) != 0 || union.Stats() != (Stats{}) {
					t.Errorf("empty: quantile %v stats %+v", union.Quantile(0.99), union.Stats())
				}
				return
			}
			st := union.Stats()
			if st.Min != slices.Min(all) || st.Max != slices.Max(all) {
				t.Errorf("min/max %v/%v, want %v/%v", st.Min, st.Max, slices.Min(all), slices.Max(all))
			}
			for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999, 1} {
				got, want := union.Quantile(q), nearestRank(all, q)
				if tc.exact {
					if got != want {
						t.Errorf("q%g = %v, want exactly %v", q, got, want)
					}
					continue
				}
				if e := math.Abs(float64(got-want)) / float64(want); e > 0.01 {
					t.Errorf("q%g = %v, want %v within 1%% (off by %.2f%%)", q, got, want, 100*e)
				}
			}
			if (union.hist == nil) != tc.exact {
				t.Errorf("histogrammed %v, want %v", union.hist != nil, !tc.exact)
			}
		})
	}
}
