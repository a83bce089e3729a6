package simlab

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
)

func TestSeriesDownsampling(t *testing.T) {
	const us = clock.Microsecond
	tests := []struct {
		name   string
		kind   telemetry.Kind
		max    int
		values []float64 // one reading per µs from t=0
		want   []Point
		width  clock.Duration
	}{
		{
			name: "fits", kind: telemetry.Gauge, max: 4, values: []float64{1, 2, 3},
			width: us,
			want:  []Point{{T: 0, V: 1, Min: 1, Max: 1}, {T: clock.Time(us), V: 2, Min: 2, Max: 2}, {T: clock.Time(2 * us), V: 3, Min: 3, Max: 3}},
		},
		{
			name: "one merge", kind: telemetry.Gauge, max: 4, values: []float64{1, 3, 5, 7, 9},
			width: 2 * us,
			want:  []Point{{T: 0, V: 2, Min: 1, Max: 3}, {T: clock.Time(2 * us), V: 6, Min: 5, Max: 7}, {T: clock.Time(4 * us), V: 9, Min: 9, Max: 9}},
		},
		{
			name: "two merges", kind: telemetry.Gauge, max: 2, values: []float64{0, 4, 8, 0, 2},
			width: 4 * us,
			want:  []Point{{T: 0, V: 3, Min: 0, Max: 8}, {T: clock.Time(4 * us), V: 2, Min: 2, Max: 2}},
		},
		{
			name: "counter keeps the last", kind: telemetry.Counter, max: 2, values: []float64{1, 2, 3, 4},
			width: 2 * us,
			want:  []Point{{T: 0, V: 2, Min: 1, Max: 2}, {T: clock.Time(2 * us), V: 4, Min: 3, Max: 4}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := NewStore(us, tc.max)
			var sum float64
			for i, v := range tc.values {
				st.Record("x", nil, tc.kind, clock.Time(clock.Duration(i)*us), v)
				sum += v
			}
			s, ok := st.Get("x")
			if !ok {
				t.Fatal("no series")
			}
			if d := cmp.Diff(tc.want, s.Points); d != "" {
				t.Errorf("points (-want +got):\n%s", d)
			}
			if s.Width != tc.width {
				t.Errorf("width %v, want %v", s.Width, tc.width)
			}
			if s.Totals.Count != int64(len(tc.values)) || s.Totals.Sum != sum || s.Totals.Last != tc.values[len(tc.values)-1] {
				t.Errorf("totals %+v", s.Totals)
			}
		})
	}
}

// TestSeriesBounded records a long run: memory stays at MaxPoints, totals
// stay exact.
func TestSeriesBounded(t *testing.T) {
	st := NewStore(clock.Microsecond, 100)
	const n = 100_000
	var sum float64
	for i := range n {
		v := float64(i % 7)
		sum += v
		st.Record("q", []telemetry.Label{lbl("port", "1")}, telemetry.Gauge, clock.Time(clock.Duration(i)*clock.Microsecond), v)
	}
	s := st.Find("q", lbl("port", "1"))[0]
	if len(s.Points) > 100 || len(s.Points) < 50 {
		t.Errorf("%d points, want 50..100", len(s.Points))
	}
	if s.Totals.Count != n || s.Totals.Sum != sum || s.Totals.Min != 0 || s.Totals.Max != 6 {
		t.Errorf("totals %+v, want count %d sum %v", s.Totals, n, sum)
	}
	var weighted float64
	for _, p := range s.Points {
		if p.Min != 0 || p.Max != 6 {
			t.Fatalf("point %+v lost the extremes", p)
		}
		weighted += p.V
	}
	if mean := weighted / float64(len(s.Points)); mean < 2.9 || mean > 3.1 {
		t.Errorf("mean of points %v, want ≈ 3", mean)
	}
	if len(st.Find("q", lbl("port", "2"))) != 0 || len(st.All()) != 1 {
		t.Error("Find matched the wrong series")
	}
}
