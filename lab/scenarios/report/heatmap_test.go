package report

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestBandStarts(t *testing.T) {
	tests := []struct {
		n, limit int
		want     []int
	}{
		{0, 200, []int{0}},
		{1, 200, []int{0, 1}},
		{5, 200, []int{0, 1, 2, 3, 4, 5}},
		{200, 200, seqInts(0, 200)},
		{201, 200, append([]int{0}, seqInts(2, 201)...)}, // the first band holds two
		{10, 3, []int{0, 4, 7, 10}},
		{10, 0, []int{0, 10}},
		{1008, 200, nil}, // checked below: 200 bands of 5 or 6
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d in %d", tc.n, tc.limit), func(t *testing.T) {
			got := bandStarts(tc.n, tc.limit)
			if tc.want != nil {
				if d := cmp.Diff(tc.want, got); d != "" {
					t.Errorf("bandStarts (-want +got):\n%s", d)
				}
			}
			if got[0] != 0 || got[len(got)-1] != tc.n || len(got)-1 > max(tc.limit, 1) {
				t.Errorf("bounds %v: want 0..%d in at most %d bands", got, tc.n, tc.limit)
			}
			lo, hi := math.MaxInt, 0
			for i := 1; i < len(got); i++ {
				lo, hi = min(lo, got[i]-got[i-1]), max(hi, got[i]-got[i-1])
			}
			if tc.n > 0 && hi-lo > 1 {
				t.Errorf("bands of %d to %d rows: want even", lo, hi)
			}
		})
	}
}

func seqInts(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func TestBinRows(t *testing.T) {
	nan := math.NaN()
	rows := [][]float64{{1, nan, 3}, {5, nan, 1}, {nan, nan, 2}, {4, 4, 4}}
	tests := []struct {
		name   string
		starts []int
		mean   bool
		want   [][]float64
	}{
		{"one row a band", []int{0, 1, 2, 3, 4}, false, rows},
		{"max of two", []int{0, 2, 4}, false, [][]float64{{5, nan, 3}, {4, 4, 4}}},
		{"mean of two, no-data cells left out", []int{0, 2, 4}, true, [][]float64{{3, nan, 2}, {4, 4, 3}}},
		{"max of all", []int{0, 4}, false, [][]float64{{5, 4, 4}}},
		{"mean of all", []int{0, 4}, true, [][]float64{{10.0 / 3, 4, 2.5}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, binRows(rows, tc.starts, tc.mean), cmpopts.EquateNaNs()); d != "" {
				t.Errorf("binRows (-want +got):\n%s", d)
			}
		})
	}
}

func TestSpread(t *testing.T) {
	tests := []struct {
		name     string
		from, to float64
		want     []float64
	}{
		{"one cell", 1, 2, []float64{0, 7, 0, 0}},
		{"across cells", 0.5, 2.5, []float64{7, 7, 7, 0}},
		{"narrower than a cell", 2.2, 2.3, []float64{0, 0, 7, 0}},
		{"past the end", 3, 9, []float64{0, 0, 0, 7}},
		{"bounds on cell edges", 1, 3, []float64{0, 7, 7, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			row := make([]float64, 4)
			spread(row, tc.from, tc.to, 1, 7, maxCell)
			if d := cmp.Diff(tc.want, row); d != "" {
				t.Errorf("spread (-want +got):\n%s", d)
			}
		})
	}
}

func TestHeatColor(t *testing.T) {
	if c := heatColor(math.NaN(), 1); c != noData {
		t.Errorf("NaN: %v, want the no-data colour", c)
	}
	for _, v := range []float64{0, -1} {
		if c := heatColor(v, 10); c != heatRamp[0] {
			t.Errorf("%g: %v, want white", v, c)
		}
	}
	if c := heatColor(10, 10); c != heatRamp[len(heatRamp)-1] {
		t.Errorf("max: %v, want the darkest", c)
	}
	if c := heatColor(20, 10); c != heatRamp[len(heatRamp)-1] {
		t.Errorf("above max: %v, want the darkest", c)
	}
	if heatColor(1, 0) != heatRamp[0] {
		t.Error("a scale of 0 colours a value")
	}
}
