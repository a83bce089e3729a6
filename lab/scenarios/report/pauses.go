package report

import (
	"fmt"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
)

// Pause kinds, in legend order.
const (
	// PauseXOFF: a switch holds its upstream in XOFF (it sends the pauses).
	PauseXOFF = iota
	// PauseEgress: a switch egress queue is paused by its peer.
	PauseEgress
	// PauseNIC: a NIC is paused by its switch.
	PauseNIC
)

// pauseSources are the series each pause kind is drawn from: the
// pause-time counter (seconds paused so far, the ongoing pause included:
// the summary's numbers are its final values), or, in data without it,
// the 0/1 state gauge.
var pauseSources = [...]struct{ counter, gauge, class string }{
	PauseXOFF:   {"switch_pg_xoff_seconds_total", "switch_pg_xoff", "pg"},
	PauseEgress: {"switch_queue_paused_seconds_total", "switch_queue_paused", "tc"},
	PauseNIC:    {"nic_paused_seconds_total", "nic_paused", "prio"},
}

// PauseRow is one row of plots/pfc: a link direction and priority, and
// the spans of fabric time it was paused.
type PauseRow struct {
	Kind        int
	Node, Port  string // Port "" for a NIC (Node is then host:nic)
	Class, Name string
	Spans       []Span
	// Sampling says how the row's series was read (sampling).
	Sampling string
}

// Span is an interval of fabric time.
type Span struct{ From, To clock.Time }

// Total is the time the row was paused.
func (r PauseRow) Total() clock.Duration {
	var t clock.Duration
	for _, s := range r.Spans {
		t += s.To.Sub(s.From)
	}
	return t
}

// Pauses returns the rows plots/pfc draws (all of them; the plot draws
// the first maxRows), built from the pause-time counters where d has
// them, so that a row's spans add up to what its counter says — what the
// summary reports — however coarse the readings. Between two readings
// a and b the counter grew by δ; the row is paused for δ of [a, b],
// placed where the neighbouring readings say the pause was: at the end
// when the next interval is paused too (a pause beginning), at the start
// when the previous one was (a pause ending), both when both were (half
// each), in the middle when neither was.
func Pauses(d Data) []PauseRow {
	var rows []PauseRow
	for kind, src := range pauseSources {
		if cs := d.find(src.counter); len(cs) > 0 {
			for _, s := range cs {
				if r, ok := d.pauseRow(kind, s, counterSpans(s)); ok {
					rows = append(rows, r)
				}
			}
			continue
		}
		for _, s := range d.find(src.gauge) {
			if r, ok := d.pauseRow(kind, s, gaugeSpans(s)); ok {
				rows = append(rows, r)
			}
		}
	}
	return rows
}

// pauseRow names the row of series s, false when it was never paused.
func (d Data) pauseRow(kind int, s simlab.Series, spans []Span) (PauseRow, bool) {
	if len(spans) == 0 {
		return PauseRow{}, false
	}
	r := PauseRow{Kind: kind, Node: s.Label("node"), Port: s.Label("port"), Class: s.Label(pauseSources[kind].class),
		Spans: spans, Sampling: sampling([]simlab.Series{s})}
	switch kind {
	case PauseXOFF:
		r.Name = d.portName(r.Node, r.Port) + " sends XOFF p" + r.Class
	case PauseEgress:
		r.Name = d.portName(r.Node, r.Port) + " paused p" + r.Class
	default:
		r.Name = r.Node + " NIC paused p" + r.Class
	}
	return r, true
}

// counterSpans places the growth of a pause-time counter (seconds) as
// Pauses describes. A counter read first after fabric time 0 counts from
// 0 at time 0.
func counterSpans(s simlab.Series) []Span {
	type step struct {
		a, b clock.Time
		d    clock.Duration
	}
	var steps []step
	prevT, prevV := clock.Time(0), 0.0
	for i, p := range s.Points {
		if i == 0 && p.T <= 0 {
			prevT, prevV = p.T, p.V
			continue
		}
		d := clock.Duration((p.V - prevV) * float64(clock.Second))
		d = min(max(d, 0), p.T.Sub(prevT))
		steps = append(steps, step{prevT, p.T, d})
		prevT, prevV = p.T, p.V
	}
	var spans []Span
	add := func(from, to clock.Time) {
		if to <= from {
			return
		}
		if n := len(spans); n > 0 && spans[n-1].To >= from {
			spans[n-1].To = max(spans[n-1].To, to)
			return
		}
		spans = append(spans, Span{from, to})
	}
	for i, st := range steps {
		if st.d <= 0 {
			continue
		}
		before := i > 0 && steps[i-1].d > 0
		after := i+1 < len(steps) && steps[i+1].d > 0
		switch {
		case st.d >= st.b.Sub(st.a):
			add(st.a, st.b)
		case after && !before:
			add(st.b.Add(-st.d), st.b)
		case before && !after:
			add(st.a, st.a.Add(st.d))
		case before && after:
			add(st.a, st.a.Add(st.d/2))
			add(st.b.Add(-(st.d - st.d/2)), st.b)
		default:
			mid := st.a.Add(st.b.Sub(st.a) / 2)
			add(mid.Add(-st.d/2), mid.Add(st.d-st.d/2))
		}
	}
	return spans
}

// gaugeSpans are the points of a 0/1 pause state that were ever 1, each
// over its width: data without a pause-time counter.
func gaugeSpans(s simlab.Series) []Span {
	var spans []Span
	for _, p := range s.Points {
		if p.Max <= 0 {
			continue
		}
		a, b := p.T, p.T.Add(s.Width)
		if n := len(spans); n > 0 && spans[n-1].To >= a {
			spans[n-1].To = b
		} else {
			spans = append(spans, Span{a, b})
		}
	}
	return spans
}

// sampling says how series were read, for a plot's title: "10 readings,
// 200 µs apart" when each point is one reading (the emulation's
// snapshots), "a reading every 4 µs, a point per 8 µs" when points merge
// readings (the simulator's sampler on a long run).
func sampling(ss []simlab.Series) string {
	var readings int64
	points := 0
	width := clock.Duration(0)
	for _, s := range ss {
		if s.Totals.Count > readings {
			readings, points, width = s.Totals.Count, len(s.Points), s.Width
		}
	}
	if readings == 0 || width <= 0 {
		return ""
	}
	if readings <= int64(points) {
		return fmt.Sprintf("%d readings, %s apart", readings, secsText(width.Seconds()))
	}
	every := clock.Duration(int64(width) * int64(points) / readings)
	return fmt.Sprintf("a reading every %s, a point per %s", secsText(every.Seconds()), secsText(width.Seconds()))
}
