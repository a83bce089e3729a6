package expect

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
)

// Point is one reading of a series.
type Point struct {
	At    clock.Time
	Value float64
}

// Series is the readings of one telemetry sample (a name and its labels)
// over a run, in time order.
type Series struct {
	Labels []telemetry.Label
	Points []Point
}

// Metrics is what a run measured, as expectations read it.
type Metrics interface {
	// Lookup returns the series of the telemetry samples called name
	// whose labels include all of match. None is not an error: a counter
	// the models emit only once non-zero (drops) reads as 0.
	Lookup(name string, match []telemetry.Label) ([]Series, error)
}

// Snapshot is the telemetry gathered at one moment of a run.
type Snapshot struct {
	At      clock.Time
	Samples []telemetry.Sample
}

// Snapshots are a run's telemetry gathered at moments in time order (at
// least once, at the end): a Metrics.
type Snapshots []Snapshot

var _ Metrics = Snapshots(nil)

// Lookup implements Metrics.
func (s Snapshots) Lookup(name string, match []telemetry.Label) ([]Series, error) {
	index := map[string]int{}
	var out []Series
	for _, snap := range s {
	next:
		for _, smp := range snap.Samples {
			if smp.Name != name {
				continue
			}
			for _, m := range match {
				if smp.Label(m.Name) != m.Value {
					continue next
				}
			}
			key := smp.String()
			i, ok := index[key]
			if !ok {
				i = len(out)
				index[key] = i
				out = append(out, Series{Labels: smp.Labels})
			}
			out[i].Points = append(out[i].Points, Point{snap.At, smp.Value})
		}
	}
	return dropRetiredQPs(out, s), nil
}

// dropRetiredQPs leaves out the series of a QP that was destroyed before
// the last snapshot when its NIC's "retired" row (the sum of its destroyed
// QPs' counters, endpoint's telemetry) is in the last snapshot: the QP's
// counts are in that row, and its own last reading would count them twice.
func dropRetiredQPs(out []Series, s Snapshots) []Series {
	if len(s) == 0 {
		return out
	}
	end := s[len(s)-1].At
	retired := map[string]bool{}
	for _, se := range out {
		if qp := labelOf(se.Labels, "qp"); qp == "retired" && se.Points[len(se.Points)-1].At == end {
			retired[withoutQP(se.Labels)] = true
		}
	}
	if len(retired) == 0 {
		return out
	}
	kept := out[:0]
	for _, se := range out {
		qp := labelOf(se.Labels, "qp")
		if qp != "" && qp != "retired" && se.Points[len(se.Points)-1].At < end && retired[withoutQP(se.Labels)] {
			continue
		}
		kept = append(kept, se)
	}
	return kept
}

func labelOf(ls []telemetry.Label, name string) string {
	for _, l := range ls {
		if l.Name == name {
			return l.Value
		}
	}
	return ""
}

// withoutQP is a key of ls without its qp label.
func withoutQP(ls []telemetry.Label) string {
	var b strings.Builder
	for _, l := range ls {
		if l.Name != "qp" {
			b.WriteString(l.Name + "=" + l.Value + ",")
		}
	}
	return b.String()
}

// Comparison is one comparison of an expectation, evaluated.
type Comparison struct {
	// Text of the comparison, and of each side, as written.
	Text, LeftText, RightText string
	Op                        string
	Left, Right               Quantity
	Pass                      bool
	// rightLiteral: the right side is a number as written (then String
	// does not repeat it).
	rightLiteral bool
}

// String is the human sentence: "busbw(job=train) = 312.4 Gb/s, wanted >= 320 Gb/s (0.8 * line_rate)".
func (c Comparison) String() string {
	s := fmt.Sprintf("%s = %s, wanted %s %s", c.LeftText, c.Left, c.Op, c.Right)
	if c.RightText != c.Right.String() && !c.rightLiteral {
		s += " (" + c.RightText + ")"
	}
	return s
}

type constExpr struct {
	v float64
	u Unit
}

func (c constExpr) eval(Metrics) (float64, error) { return c.v, nil }

func (c constExpr) unit() Unit { return c.u }

type arithExpr struct {
	op   string
	l, r numExpr
	u    Unit
}

func (a arithExpr) unit() Unit { return a.u }

func (a arithExpr) eval(m Metrics) (float64, error) {
	l, err := a.l.eval(m)
	if err != nil {
		return 0, err
	}
	r, err := a.r.eval(m)
	if err != nil {
		return 0, err
	}
	switch a.op {
	case "+":
		return l + r, nil
	case "-":
		return l - r, nil
	case "*":
		return l * r, nil
	}
	if r == 0 {
		return 0, fmt.Errorf("division by zero")
	}
	return l / r, nil
}

type compareExpr struct {
	op                 string
	l, r               numExpr
	text, ltext, rtext string
	rLiteral           bool
}

func (c *compareExpr) evalBool(m Metrics, out *[]Comparison) (bool, error) {
	l, err := c.l.eval(m)
	if err != nil {
		return false, err
	}
	r, err := c.r.eval(m)
	if err != nil {
		return false, err
	}
	eq := l == r || math.Abs(l-r) <= 1e-9*math.Max(math.Abs(l), math.Abs(r))
	var pass bool
	switch c.op {
	case "==":
		pass = eq
	case "!=":
		pass = !eq
	case "<":
		pass = l < r && !eq
	case "<=":
		pass = l < r || eq
	case ">":
		pass = l > r && !eq
	case ">=":
		pass = l > r || eq
	}
	*out = append(*out, Comparison{
		Text: c.text, LeftText: c.ltext, RightText: c.rtext, Op: c.op,
		Left: Quantity{l, c.l.unit()}, Right: Quantity{r, c.r.unit()}, Pass: pass, rightLiteral: c.rLiteral,
	})
	return pass, nil
}

type logicExpr struct {
	op   string
	l, r boolExpr
}

// evalBool evaluates both sides, so that the report shows every value.
func (e logicExpr) evalBool(m Metrics, out *[]Comparison) (bool, error) {
	l, err := e.l.evalBool(m, out)
	if err != nil {
		return false, err
	}
	r, err := e.r.evalBool(m, out)
	if err != nil {
		return false, err
	}
	if e.op == "and" {
		return l && r, nil
	}
	return l || r, nil
}

type notExpr struct{ x boolExpr }

func (e notExpr) evalBool(m Metrics, out *[]Comparison) (bool, error) {
	v, err := e.x.evalBool(m, out)
	return !v, err
}

type metricExpr struct {
	m       *Metric
	agg     string
	text    string
	lookups []Lookup
	u       Unit
}

func (e *metricExpr) unit() Unit { return e.u }

func (e *metricExpr) eval(m Metrics) (float64, error) {
	seen := map[string]bool{}
	var series []Series
	for _, l := range e.lookups {
		ss, err := m.Lookup(l.Sample, l.Match)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", e.text, err)
		}
		for _, s := range ss {
			key := telemetry.Sample{Name: l.Sample, Labels: s.Labels}.String()
			if seen[key] || len(s.Points) == 0 {
				continue
			}
			seen[key] = true
			pts := slices.Clone(s.Points)
			for i := range pts {
				pts[i].Value *= l.Scale
			}
			series = append(series, Series{Labels: s.Labels, Points: pts})
		}
	}
	if len(series) == 0 {
		if e.m.Type == Counter {
			return 0, nil
		}
		return 0, fmt.Errorf("no readings of %s", e.text)
	}
	return aggregate(e.agg, e.text, series)
}

// aggregate reduces series by agg (see Aggregations).
func aggregate(agg, text string, series []Series) (float64, error) {
	var all []float64
	for _, s := range series {
		for _, p := range s.Points {
			all = append(all, p.Value)
		}
	}
	switch agg {
	case "sum", "last":
		var t float64
		for _, s := range series {
			t += s.Points[len(s.Points)-1].Value
		}
		return t, nil
	case "max":
		return slices.Max(all), nil
	case "min":
		return slices.Min(all), nil
	case "avg":
		var t float64
		for _, v := range all {
			t += v
		}
		return t / float64(len(all)), nil
	case "count":
		return float64(len(all)), nil
	case "rate":
		var t float64
		for _, s := range series {
			first, last := s.Points[0], s.Points[len(s.Points)-1]
			dt := last.At.Sub(first.At).Seconds()
			if dt <= 0 {
				return 0, fmt.Errorf("%s needs readings at two moments of the run", text)
			}
			t += (last.Value - first.Value) / dt
		}
		return t, nil
	}
	var q float64
	switch agg {
	case "p50":
		q = 0.50
	case "p90":
		q = 0.90
	case "p99":
		q = 0.99
	case "p999":
		q = 0.999
	default:
		return 0, fmt.Errorf("%s: unknown aggregation %s", text, agg)
	}
	slices.Sort(all)
	i := int(math.Ceil(q*float64(len(all)))) - 1
	return all[max(i, 0)], nil
}
