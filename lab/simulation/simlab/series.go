package simlab

import (
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
)

// Point is one point of a series: the aggregate of the readings taken in
// [T, T+Series.Width). V is their mean for a gauge and the last reading
// for a counter; Min and Max are their extremes.
type Point struct {
	T           clock.Time
	V, Min, Max float64
}

// Totals are exact running aggregates over every reading of a series,
// however much its points were merged.
type Totals struct {
	Count          int64
	Sum            float64
	Min, Max, Last float64
}

// Mean returns Sum / Count (0 without readings).
func (t Totals) Mean() float64 {
	if t.Count == 0 {
		return 0
	}
	return t.Sum / float64(t.Count)
}

// Series is a snapshot of one recorded time series.
type Series struct {
	Name   string
	Labels []telemetry.Label
	Kind   telemetry.Kind
	// Width is the time each point covers: the sampling interval until
	// the series filled its points, then doubled at every merge.
	Width  clock.Duration
	Points []Point
	Totals Totals
}

// Label returns the value of the named label, or "".
func (s Series) Label(name string) string {
	return telemetry.Sample{Labels: s.Labels}.Label(name)
}

// bucketBytes is the size of a bucket, for memory budgets.
const bucketBytes = int64(unsafe.Sizeof(bucket{}))

// bucket accumulates the readings of one point.
type bucket struct {
	n              int64
	sum            float64
	min, max, last float64
}

func (b *bucket) add(v float64) {
	if b.n == 0 || v < b.min {
		b.min = v
	}
	if b.n == 0 || v > b.max {
		b.max = v
	}
	b.n++
	b.sum += v
	b.last = v
}

// merge folds o, which comes later in time, into b.
func (b *bucket) merge(o bucket) {
	if o.n == 0 {
		return
	}
	if b.n == 0 {
		*b = o
		return
	}
	b.min, b.max = min(b.min, o.min), max(b.max, o.max)
	b.n += o.n
	b.sum += o.sum
	b.last = o.last
}

// series is a bounded-memory time series: at most cap buckets of equal
// width from t0; when a reading falls past the last one, neighbouring
// buckets are merged pairwise and the width doubles.
type series struct {
	name   string
	labels []telemetry.Label
	kind   telemetry.Kind
	t0     clock.Time
	width  clock.Duration
	cap    int
	b      []bucket
	tot    bucket
}

func newSeries(name string, labels []telemetry.Label, kind telemetry.Kind, t0 clock.Time, width clock.Duration, capacity int) *series {
	return &series{name: name, labels: labels, kind: kind, t0: t0, width: max(width, 1), cap: max(capacity, 2)}
}

// add records reading v taken at t (t >= t0, non-decreasing).
func (s *series) add(t clock.Time, v float64) {
	s.tot.add(v)
	idx := int(t.Sub(s.t0) / s.width)
	for idx >= s.cap {
		s.halve()
		idx = int(t.Sub(s.t0) / s.width)
	}
	for len(s.b) <= idx {
		s.b = append(s.b, bucket{})
	}
	s.b[idx].add(v)
}

// halve merges buckets pairwise and doubles the width.
func (s *series) halve() {
	n := (len(s.b) + 1) / 2
	for i := range n {
		m := s.b[2*i]
		if 2*i+1 < len(s.b) {
			m.merge(s.b[2*i+1])
		}
		s.b[i] = m
	}
	clear(s.b[n:])
	s.b = s.b[:n]
	s.width *= 2
}

func (s *series) snapshot() Series {
	out := Series{Name: s.name, Labels: slices.Clone(s.labels), Kind: s.kind, Width: s.width,
		Totals: Totals{Count: s.tot.n, Sum: s.tot.sum, Min: s.tot.min, Max: s.tot.max, Last: s.tot.last}}
	for i, b := range s.b {
		if b.n == 0 {
			continue
		}
		v := b.last
		if s.kind == telemetry.Gauge {
			v = b.sum / float64(b.n)
		}
		out.Points = append(out.Points, Point{T: s.t0.Add(clock.Duration(i) * s.width), V: v, Min: b.min, Max: b.max})
	}
	return out
}

// Store holds recorded series, each with at most a fixed number of
// points.
type Store struct {
	points int
	width  clock.Duration
	list   []*series
	byKey  map[string]*series
}

// NewStore returns a store whose series start with points of width
// interval and keep at most maxPoints points (at least 2).
func NewStore(interval clock.Duration, maxPoints int) *Store {
	return &Store{points: maxPoints, width: interval, byKey: map[string]*series{}}
}

// Record adds reading v of the series (name, labels) taken at t; the
// series is created on its first reading. Readings of one series must come
// in non-decreasing time.
func (st *Store) Record(name string, labels []telemetry.Label, kind telemetry.Kind, t clock.Time, v float64) {
	st.add(st.open(name, labels, kind, t), t, v)
}

// open returns the series (name, labels), creating it with its first
// point at t.
func (st *Store) open(name string, labels []telemetry.Label, kind telemetry.Kind, t clock.Time) *series {
	k := telemetry.Sample{Name: name, Labels: labels}.String()
	s := st.byKey[k]
	if s == nil {
		s = newSeries(name, slices.Clone(labels), kind, t, st.width, st.points)
		st.byKey[k] = s
		st.list = append(st.list, s)
	}
	return s
}

// recordTo is Record for a caller that keeps the series between readings
// in *h (nil before the first): a large lab has tens of thousands of
// series, and building each one's key at every reading cost the sampler
// a third of the run.
func (st *Store) recordTo(h **series, name string, labels []telemetry.Label, kind telemetry.Kind, t clock.Time, v float64) {
	if *h == nil {
		*h = st.open(name, labels, kind, t)
	}
	st.add(*h, t, v)
}

func (st *Store) add(s *series, t clock.Time, v float64) {
	if !math.IsNaN(v) {
		s.add(t, v)
	}
}

// Len returns the number of series.
func (st *Store) Len() int { return len(st.list) }

// All returns a snapshot of every series, sorted by name and labels.
func (st *Store) All() []Series {
	return st.Find("")
}

// Find returns the series called name (every series for "") whose labels
// include all of match, sorted by name and labels.
func (st *Store) Find(name string, match ...telemetry.Label) []Series {
	keys := make([]string, 0, len(st.byKey))
	for k, s := range st.byKey {
		if name != "" && s.name != name {
			continue
		}
		ok := true
		for _, m := range match {
			if (telemetry.Sample{Labels: s.labels}).Label(m.Name) != m.Value {
				ok = false
				break
			}
		}
		if ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, strings.Compare)
	out := make([]Series, len(keys))
	for i, k := range keys {
		out[i] = st.byKey[k].snapshot()
	}
	return out
}

// Get returns the one series called name with exactly labels.
func (st *Store) Get(name string, labels ...telemetry.Label) (Series, bool) {
	s := st.byKey[telemetry.Sample{Name: name, Labels: labels}.String()]
	if s == nil {
		return Series{}, false
	}
	return s.snapshot(), true
}
