package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/fct"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/topologies"
)

// The plots of a large fabric's report (Data.Aggregated), drawn beside
// the small lab's: distributions over every flow of a job instead of one
// line per flow, and per tier of switches a heat map (rows: switches,
// binned into at most maxBands bands; columns: time) and the quantiles
// of its queues, instead of one line per queue.

// cdfPoints is the most points a distribution's curve has.
const cdfPoints = 200

// namedFigure is a figure and its file's base name.
type namedFigure struct {
	name string
	fig  *figure
}

// largeFigures returns the plots of an aggregated run, in order: per
// perf job its completion-time and goodput distributions, per tier (top
// tier first) its queue quantiles, the pauses per tier, and per tier its
// queue and utilisation heat maps and, if any of its queues was paused,
// its pause heat map.
func (d Data) largeFigures(unit string, mul, xmax float64) []namedFigure {
	var out []namedFigure
	add := func(name string, f *figure) {
		if f != nil {
			out = append(out, namedFigure{name, f})
		}
	}
	for _, j := range d.Jobs {
		add("fct-"+plotFileName(j.Name), fctChart(j))
		add("goodput-"+plotFileName(j.Name), goodputChart(j))
	}
	tiers := d.tiers()
	for _, t := range tiers {
		add("tier-queues-"+plotFileName(t), d.tierQueueChart(t, unit, mul, xmax))
	}
	add("pfc-tiers", d.pfcTierChart(tiers, unit, mul, xmax))
	groups := d.switchesByTier()
	for _, t := range tiers {
		add("heat-queues-"+plotFileName(t), d.queueHeat(t, groups[t], unit, mul, xmax))
		add("heat-util-"+plotFileName(t), d.utilHeat(t, groups[t], unit, mul, xmax))
		add("heat-pfc-"+plotFileName(t), d.pauseHeat(t, groups[t], unit, mul, xmax))
	}
	return out
}

// plotFileName keeps a name's letters, digits, '-' and '_' (a job or
// role name in a file name).
func plotFileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// FCTStats are the marks of a job's completion-time distribution, as
// flow_fct_seconds{job,stat} has them (run.emitFCT): nearest-rank p50
// and p99, and the max, in seconds.
func FCTStats(d *fct.Dist) (p50, p99, maxv float64) {
	return d.Quantile(0.50).Seconds(), d.Quantile(0.99).Seconds(), d.Stats().Max.Seconds()
}

// durationUnit picks µs or ms for durations up to s seconds.
func durationUnit(s float64) (string, float64) {
	if s < 2e-3 {
		return "µs", 1e6
	}
	return "ms", 1e3
}

// markers are vertical lines at x of a CDF (y from 0 to 1), named.
func markers(names []string, xs []float64) []lineSeries {
	var out []lineSeries
	for i, x := range xs {
		out = append(out, lineSeries{Name: names[i], X: []float64{x, x}, Y: []float64{0, 1}})
	}
	return out
}

// fctChart draws the distribution (CDF) of the completion times of every
// message of a job, p50, p99 and max marked with the numbers the summary
// and flow_fct_seconds give.
func fctChart(j Job) *figure {
	if j.FCT == nil || j.FCT.Count() == 0 {
		return nil
	}
	d := j.FCT
	p50, p99, mx := FCTStats(d)
	unit, mul := durationUnit(mx)
	l := lineSeries{Name: fmt.Sprintf("%d messages", d.Count()), X: []float64{d.Stats().Min.Seconds() * mul}, Y: []float64{0}}
	for i := 1; i <= cdfPoints; i++ {
		q := float64(i) / cdfPoints
		l.X = append(l.X, d.Quantile(q).Seconds()*mul)
		l.Y = append(l.Y, q)
	}
	lines := append([]lineSeries{l}, markers(
		[]string{"p50 = " + secsText(p50), "p99 = " + secsText(p99), "max = " + secsText(mx)},
		[]float64{p50 * mul, p99 * mul, mx * mul})...)
	return &figure{Title: fmt.Sprintf("Job %s: completion times of all %d messages (CDF)", j.Name, d.Count()),
		XLabel: "completion time (" + unit + ")", YLabel: "fraction of messages", Lines: lines, XMax: mx * mul * 1.05}
}

// goodputChart draws the distribution (CDF) of the goodput of every flow
// of a job, the slowest flow, p1 and the median marked.
func goodputChart(j Job) *figure {
	if len(j.Flows) < 2 {
		return nil
	}
	g := make([]float64, len(j.Flows))
	for i, f := range j.Flows {
		g[i] = f.GoodputBps / 1e9
	}
	slices.Sort(g)
	rank := func(q float64) float64 { return g[max(int(math.Ceil(q*float64(len(g)))), 1)-1] }
	l := lineSeries{Name: fmt.Sprintf("%d flows", len(g)), X: []float64{g[0]}, Y: []float64{0}}
	for i := 1; i <= min(cdfPoints, len(g)); i++ {
		q := float64(i) / float64(min(cdfPoints, len(g)))
		l.X = append(l.X, rank(q))
		l.Y = append(l.Y, q)
	}
	lines := append([]lineSeries{l}, markers(
		[]string{fmt.Sprintf("min = %.1f Gb/s", g[0]), fmt.Sprintf("p1 = %.1f Gb/s", rank(0.01)), fmt.Sprintf("p50 = %.1f Gb/s", rank(0.5))},
		[]float64{g[0], rank(0.01), rank(0.5)})...)
	return &figure{Title: fmt.Sprintf("Job %s: goodput of each of its %d flows (CDF)", j.Name, len(g)),
		XLabel: "goodput (Gb/s)", YLabel: "fraction of flows", Lines: lines, XMax: g[len(g)-1] * 1.05}
}

// tiers returns the switch roles of the aggregated series, top tier
// first (ATSW, CTSW, RTSW); a front-end tier (RSW, FSW) only if its
// queues held anything.
func (d Data) tiers() []string {
	var out []string
	for _, s := range d.find(simlab.AggTierDepth) {
		r := s.Label("role")
		if topologies.Role(r).Plane() == topologies.FE && s.Label("stat") == "max" && s.Totals.Max <= 0 {
			continue
		}
		if !slices.Contains(out, r) && s.Label("stat") == "max" {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(topologies.Role(b).Tier(), topologies.Role(a).Tier()), cmp.Compare(a, b))
	})
	return out
}

// tierName is a role as the plots write it.
func tierName(role string) string { return strings.ToUpper(role) }

// tierQueues returns how many queues the tier's aggregates cover.
func (d Data) tierQueues(role string) float64 {
	for _, s := range d.find(simlab.AggTierQueues) {
		if s.Label("role") == role {
			return s.Totals.Last
		}
	}
	return 0
}

// tierQueueChart draws the p50, p99 and max of the depths of every egress
// queue of a tier over time (each point the highest reading in its
// window).
func (d Data) tierQueueChart(role, unit string, mul, xmax float64) *figure {
	var lines []lineSeries
	peak := 0.0
	stats := []string{"p50", "p99", "max"}
	for _, stat := range stats {
		for _, s := range d.find(simlab.AggTierDepth) {
			if s.Label("role") != role || s.Label("stat") != stat {
				continue
			}
			l := lineSeries{Name: stat + ", peak " + bytesText(s.Totals.Max), Step: true, Width: s.Width.Seconds() * mul}
			for _, p := range s.Points {
				l.X = append(l.X, p.T.Seconds()*mul)
				l.Y = append(l.Y, p.Max)
			}
			peak = max(peak, s.Totals.Max)
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	yunit, ydiv := "KB", 1e3
	if peak >= 2e6 {
		yunit, ydiv = "MB", 1e6
	}
	for i := range lines {
		for k := range lines[i].Y {
			lines[i].Y[k] /= ydiv
		}
	}
	title := fmt.Sprintf("%s egress queues: p50, p99 and max over its %.0f queues", tierName(role), d.tierQueues(role))
	if s := sampling(d.find(simlab.AggTierDepth)); s != "" {
		title += "\n(the highest reading per point: " + s + ")"
	}
	return &figure{Title: title, XLabel: "fabric time (" + unit + ")", YLabel: "queue depth (" + yunit + ")", Lines: lines, XMax: xmax, Aligned: true}
}

// counterRate returns the rate of a counter series between consecutive
// points, at the later point's time.
func counterRate(s simlab.Series) (t []clock.Time, r []float64) {
	for i := 1; i < len(s.Points); i++ {
		a, b := s.Points[i-1], s.Points[i]
		if dt := b.T.Sub(a.T).Seconds(); dt > 0 {
			t = append(t, b.T)
			r = append(r, max(b.V-a.V, 0)/dt)
		}
	}
	return t, r
}

// pfcTierChart draws, per tier, the share of its egress queues paused by
// their peers and of its PGs holding their upstream in XOFF, and the
// share of NIC priorities paused: the pause-time counters' rates, so
// every pause counts however short.
func (d Data) pfcTierChart(tiers []string, unit string, mul, xmax float64) *figure {
	var lines []lineSeries
	// A tier keeps its colour; its XOFF line is dashed.
	line := func(name string, s simlab.Series, n float64, color int, dashed bool) {
		if n <= 0 || s.Totals.Max <= 0 {
			return
		}
		l := lineSeries{Name: name, Color: color + 1, Dashed: dashed}
		ts, rs := counterRate(s)
		for i := range ts {
			l.X = append(l.X, ts[i].Seconds()*mul)
			l.Y = append(l.Y, 100*rs[i]/n)
		}
		lines = append(lines, l)
	}
	for i, t := range tiers {
		n := d.tierQueues(t)
		for _, s := range d.find(simlab.AggTierPaused) {
			if s.Label("role") == t {
				line(tierName(t)+" egress queues paused", s, n, i, false)
			}
		}
		for _, s := range d.find(simlab.AggTierXOff) {
			if s.Label("role") == t {
				line(tierName(t)+" PGs holding upstream (XOFF)", s, n, i, true)
			}
		}
	}
	if nics := d.find(simlab.AggNICs); len(nics) > 0 {
		for _, s := range d.find(simlab.AggNICPaused) {
			line("NIC priorities paused", s, nics[0].Totals.Last, len(tiers), false)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return &figure{Title: "PFC pauses per tier: share of its queues paused (time-weighted, between readings)",
		XLabel: "fabric time (" + unit + ")", YLabel: "% of the tier's queues", Lines: lines, XMax: xmax, Aligned: true}
}

// switchesByTier returns the switches of each role, in zone then file
// order (the topology's).
func (d Data) switchesByTier() map[string][]*topologies.Node {
	out := map[string][]*topologies.Node{}
	if d.Scenario == nil || d.Scenario.Topology == nil {
		return out
	}
	for _, n := range d.Scenario.Topology.Nodes {
		if n.Kind != topologies.KindSwitch {
			continue
		}
		r := string(n.Role)
		if r == "" {
			r = simlab.TierRole
		}
		out[r] = append(out[r], n)
	}
	for _, ns := range out {
		slices.SortStableFunc(ns, func(a, b *topologies.Node) int {
			return cmp.Or(cmp.Compare(a.Zone, b.Zone), cmp.Compare(a.Index, b.Index))
		})
	}
	return out
}

// spread sets the cells of [from, to) seconds (at least the cell of from)
// of a row of cells of width cw to fn(old, v).
func spread(row []float64, from, to, cw, v float64, fn func(old, v float64) float64) {
	lo := int(math.Floor(from/cw + 1e-9))
	hi := max(int(math.Ceil(to/cw-1e-9)), lo+1)
	for c := max(lo, 0); c < hi && c < len(row); c++ {
		row[c] = fn(row[c], v)
	}
}

func nanRow(n int) []float64 {
	r := make([]float64, n)
	for i := range r {
		r[i] = math.NaN()
	}
	return r
}

func maxCell(old, v float64) float64 {
	if math.IsNaN(old) {
		return v
	}
	return math.Max(old, v)
}

// heat bins per-switch rows into bands and makes the heat map figure.
func heat(title, unit string, xmax float64, names []string, rows [][]float64, mean bool, fmtv func(float64) string) *figure {
	if len(rows) == 0 {
		return nil
	}
	starts := bandStarts(len(rows), maxBands)
	h := &heatMap{V: binRows(rows, starts, mean), Unit: fmtv}
	for b := range len(starts) - 1 {
		h.Rows = append(h.Rows, bandName(names, starts[b], starts[b+1]))
	}
	for _, r := range h.V {
		for _, v := range r {
			if !math.IsNaN(v) {
				h.Max = math.Max(h.Max, v)
			}
		}
	}
	if per := starts[1] - starts[0]; per > 1 {
		how := "deepest"
		if mean {
			how = "mean"
		}
		title += fmt.Sprintf("\n(%d switches in %d rows: a row is the %s of up to %d)", len(rows), len(starts)-1, how, per)
	}
	return &figure{Title: title, XLabel: "fabric time (" + unit + ")", Heat: h, XMax: xmax, Aligned: true}
}

// queueHeat is a tier's heat map of the deepest queue of each switch over
// time.
func (d Data) queueHeat(role string, nodes []*topologies.Node, unit string, mul, xmax float64) *figure {
	by := map[string]simlab.Series{}
	for _, s := range d.find(simlab.AggSwitchDepth) {
		by[s.Label("node")] = s
	}
	cw := xmax / heatCols
	var names []string
	var rows [][]float64
	for _, n := range nodes {
		s, ok := by[n.Name]
		if !ok {
			continue
		}
		row := nanRow(heatCols)
		for _, p := range s.Points {
			t := p.T.Seconds() * mul
			spread(row, t, t+s.Width.Seconds()*mul, cw, p.Max, maxCell)
		}
		names, rows = append(names, n.Name), append(rows, row)
	}
	return heat(fmt.Sprintf("%s: deepest egress queue of each switch", tierName(role)), unit, xmax, names, rows, false, bytesText)
}

// utilHeat is a tier's heat map of each switch's utilisation over time:
// the bytes all its ports sent over what their line rates could.
func (d Data) utilHeat(role string, nodes []*topologies.Node, unit string, mul, xmax float64) *figure {
	by := map[string]simlab.Series{}
	for _, s := range d.find(simlab.AggSwitchTx) {
		by[s.Label("node")] = s
	}
	cw := xmax / heatCols
	var names []string
	var rows [][]float64
	for _, n := range nodes {
		s, ok := by[n.Name]
		if !ok || len(s.Points) == 0 {
			continue
		}
		var capBps float64
		for _, p := range n.Ports {
			capBps += float64(p.Rate)
		}
		if capBps <= 0 {
			continue
		}
		row := nanRow(heatCols)
		ts, rs := counterRate(s)
		prev := s.Points[0].T
		for i := range ts {
			spread(row, prev.Seconds()*mul, ts[i].Seconds()*mul, cw, 100*rs[i]*8/capBps, maxCell)
			prev = ts[i]
		}
		names, rows = append(names, n.Name), append(rows, row)
	}
	return heat(fmt.Sprintf("%s: utilisation of each switch (bytes its ports sent, %% of their line rates)", tierName(role)), unit, xmax, names, rows, true,
		func(v float64) string { return fmt.Sprintf("%.0f %%", v) })
}

// pauseHeat is a tier's heat map of the share of each switch's egress
// queues paused by their peers over time (its pause-time counter's rate
// over its queues); nil when none was.
func (d Data) pauseHeat(role string, nodes []*topologies.Node, unit string, mul, xmax float64) *figure {
	by := map[string]simlab.Series{}
	for _, s := range d.find(simlab.AggSwitchPaused) {
		by[s.Label("node")] = s
	}
	ports := 0
	for _, n := range nodes {
		ports += len(n.Ports)
	}
	tcs := 0.0 // sampled classes per port
	if ports > 0 {
		tcs = d.tierQueues(role) / float64(ports)
	}
	cw := xmax / heatCols
	var names []string
	var rows [][]float64
	paused := false
	for _, n := range nodes {
		s, ok := by[n.Name]
		queues := float64(len(n.Ports)) * tcs
		if !ok || len(s.Points) == 0 || queues <= 0 {
			continue
		}
		paused = paused || s.Totals.Max > 0
		row := nanRow(heatCols)
		ts, rs := counterRate(s)
		prev := s.Points[0].T
		for i := range ts {
			spread(row, prev.Seconds()*mul, ts[i].Seconds()*mul, cw, 100*rs[i]/queues, maxCell)
			prev = ts[i]
		}
		names, rows = append(names, n.Name), append(rows, row)
	}
	if !paused {
		return nil
	}
	return heat(fmt.Sprintf("%s: share of each switch's egress queues paused by PFC (time-weighted)", tierName(role)), unit, xmax, names, rows, true,
		func(v float64) string { return fmt.Sprintf("%.0f %%", v) })
}
