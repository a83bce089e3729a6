package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
)

// Detail thresholds of metrics.csv and metrics.json (see the package
// documentation).
const (
	// fullPoints is the most series points written in full.
	fullPoints = 250_000
	// fullSamples is the most final samples written in full.
	fullSamples = 50_000
	// hotSeries is how many series of each metric keep their points in a
	// summarized report.
	hotSeries = 32
	// topSamples is how many final samples of each metric a summarized
	// report keeps.
	topSamples = 64
)

// detail is what the metrics files hold of a report's data.
type detail struct {
	// summarized is false when every point and sample is written.
	summarized bool
	// points is the number of points of all series; keptSeries and
	// keptPoints those written.
	points, keptSeries, keptPoints int
	// keep tells, per series of Data.Series, whether its points are
	// written (summarized only; nil when full).
	keep []bool
	// final lists the Data.Final samples written, by index (summarized
	// only), and totals summarizes every metric of Data.Final.
	final  []int
	totals []finalTotal
	// thinned is the most points a series of an aggregated run keeps
	// (thin), 0 when they were not thinned; allSeries says every series
	// keeps its points though the report is summarized (an aggregated
	// run's, whose final snapshot alone was too large).
	thinned   int
	allSeries bool
}

// finalTotal aggregates the final samples of one metric.
type finalTotal struct {
	Name             string
	Samples, Nonzero int
	Sum, Min, Max    float64
}

// writesPoints reports whether series i's points are written.
func (det *detail) writesPoints(i int) bool { return det.keep == nil || det.keep[i] }

// chooseDetail decides how much of d the metrics files hold: all of it
// under the thresholds, else a summary whose size depends on the number
// of metrics, not on the size of the lab or the length of the run.
func chooseDetail(d Data) *detail {
	det := &detail{}
	for _, s := range d.Series {
		det.points += len(s.Points)
	}
	det.keptSeries, det.keptPoints = len(d.Series), det.points
	if det.points <= fullPoints && len(d.Final) <= fullSamples {
		return det
	}
	det.summarized = true
	if d.Aggregated && det.points <= fullPoints {
		det.allSeries = true
		det.final, det.totals = largestFinal(d, topSamples)
		return det
	}
	det.keep = hottest(d.Series, hotSeries)
	det.keptSeries, det.keptPoints = 0, 0
	for i, k := range det.keep {
		if k {
			det.keptSeries++
			det.keptPoints += len(d.Series[i].Points)
		}
	}
	det.final, det.totals = largestFinal(d, topSamples)
	return det
}

// hottest marks, for every metric, the n series with the highest peak
// (then mean) — the ones the plots draw.
func hottest(series []simlab.Series, n int) []bool {
	byName := map[string][]int{}
	for i, s := range series {
		byName[s.Name] = append(byName[s.Name], i)
	}
	keep := make([]bool, len(series))
	for _, idx := range byName {
		slices.SortStableFunc(idx, func(a, b int) int {
			ta, tb := series[a].Totals, series[b].Totals
			return cmp.Or(cmp.Compare(tb.Max, ta.Max), cmp.Compare(tb.Mean(), ta.Mean()))
		})
		for _, i := range idx[:min(len(idx), n)] {
			keep[i] = true
		}
	}
	return keep
}

// largestFinal returns the indices of the n largest non-zero final samples
// of every metric (metrics in order of first appearance, samples by
// decreasing value, ties in snapshot order) and the totals of every
// metric. It holds n indices per metric, whatever the snapshot's size.
func largestFinal(d Data, n int) ([]int, []finalTotal) {
	type group struct {
		total finalTotal
		top   []int // up to n indices
		low   int   // position in top of the smallest value
	}
	var groups []*group
	byName := map[string]*group{}
	for i, s := range d.Final {
		g := byName[s.Name]
		if g == nil {
			g = &group{total: finalTotal{Name: s.Name, Min: math.NaN(), Max: math.NaN()}}
			byName[s.Name] = g
			groups = append(groups, g)
		}
		t := &g.total
		t.Samples++
		if math.IsNaN(s.Value) {
			continue
		}
		t.Sum += s.Value
		if math.IsNaN(t.Min) {
			t.Min, t.Max = s.Value, s.Value
		}
		t.Min, t.Max = min(t.Min, s.Value), max(t.Max, s.Value)
		if s.Value == 0 {
			continue
		}
		t.Nonzero++
		switch {
		case len(g.top) < n:
			g.top = append(g.top, i)
		case s.Value > d.Final[g.top[g.low]].Value:
			g.top[g.low] = i
		default:
			continue
		}
		// The sample to evict next: the smallest, and of equal ones the
		// latest, so that ties keep snapshot order.
		for j, k := range g.top {
			lv, kv := d.Final[g.top[g.low]].Value, d.Final[k].Value
			if kv < lv || kv == lv && k > g.top[g.low] {
				g.low = j
			}
		}
	}
	var idx []int
	totals := make([]finalTotal, 0, len(groups))
	for _, g := range groups {
		slices.SortFunc(g.top, func(a, b int) int {
			return cmp.Or(cmp.Compare(d.Final[b].Value, d.Final[a].Value), cmp.Compare(a, b))
		})
		idx = append(idx, g.top...)
		totals = append(totals, g.total)
	}
	return idx, totals
}

// thin returns the series of an aggregated run (Data.Aggregated) with
// at most max(fullPoints/len(series), 16) points each, merged pairwise
// in time (width doubled: a point's min and max are its parts', its
// value their mean for a gauge, the later one for a counter) until they
// fit, and that cap; the series and 0 when they fit already. An
// aggregated run's series grow with its switches (three each), so its
// metrics files keep every switch, coarser, instead of the hottest few
// (a replay draws them all).
func thin(ss []simlab.Series) ([]simlab.Series, int) {
	total := 0
	for _, s := range ss {
		total += len(s.Points)
	}
	if total <= fullPoints || len(ss) == 0 {
		return ss, 0
	}
	limit := max(fullPoints/len(ss), 16)
	out := make([]simlab.Series, len(ss))
	for i, s := range ss {
		for len(s.Points) > limit && s.Width > 0 {
			s = halve(s)
		}
		out[i] = s
	}
	return out, limit
}

// halve merges a series' points into points of twice its width, on a
// grid from its first point.
func halve(s simlab.Series) simlab.Series {
	w := 2 * s.Width
	t0 := s.Points[0].T
	var out []simlab.Point
	n := 0 // points merged into the last one
	for _, p := range s.Points {
		at := t0.Add(clock.Duration(int64(p.T.Sub(t0)/w)) * w)
		if len(out) > 0 && out[len(out)-1].T == at {
			o := &out[len(out)-1]
			o.Min, o.Max = min(o.Min, p.Min), max(o.Max, p.Max)
			if s.Kind == telemetry.Gauge {
				o.V = (o.V*float64(n) + p.V) / float64(n+1)
			} else {
				o.V = p.V
			}
			n++
			continue
		}
		p.T = at
		out = append(out, p)
		n = 1
	}
	s.Points, s.Width = out, w
	return s
}

// note says what a summarized report left out of the metrics files.
func (det *detail) note(d Data) string {
	if det.allSeries {
		return fmt.Sprintf("summarized: the final snapshot's %d samples (over %d) are summarized; final_totals summarizes every metric "+
			"of it, final keeps the %d largest non-zero samples of each (%d samples). Every series keeps its points%s.",
			len(d.Final), fullSamples, topSamples, len(det.final), det.thinText())
	}
	return fmt.Sprintf("summarized: the lab's %d series hold %d points (over %d) and its final snapshot %d samples (over %d). "+
		"Every series keeps its totals (readings, min, mean, max, last); points are kept for the %d series of each metric "+
		"with the highest peak (%d series, %d points, the same in metrics.csv). final_totals summarizes every metric of the "+
		"final snapshot; final keeps the %d largest non-zero samples of each (%d samples).",
		len(d.Series), det.points, fullPoints, len(d.Final), fullSamples, hotSeries, det.keptSeries, det.keptPoints,
		topSamples, len(det.final))
}

// thinText says how an aggregated run's series were thinned ("" if not).
func (det *detail) thinText() string {
	if det.thinned == 0 {
		return ""
	}
	return fmt.Sprintf(" (an aggregated run's: at most %d points each, merged pairwise in time)", det.thinned)
}
