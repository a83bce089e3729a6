package report

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
)

// Plot limits.
const (
	hotQueues = 6
	maxFlows  = 10
	maxRows   = 24
)

// timeUnit picks µs or ms for a run of length d.
func timeUnit(d clock.Duration) (string, float64) {
	if d <= 2*clock.Millisecond {
		return "µs", 1e6
	}
	return "ms", 1e3
}

func (d Data) find(name string) []simlab.Series {
	var out []simlab.Series
	for _, s := range d.Series {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// writePlots draws every plot that has data and returns their base names.
func writePlots(dir string, d Data) ([]string, error) {
	unit, mul := timeUnit(d.FabricTime)
	xmax := d.FabricTime.Seconds() * mul
	var out []string
	type named = namedFigure
	figs := []named{
		{"queues", d.queueChart(unit, mul, xmax)},
		{"flows", d.flowChart(unit, mul, xmax)},
		{"pfc", d.pfcChart(unit, mul, xmax)},
		{"busbw", d.busbwChart()},
	}
	for _, j := range d.Jobs {
		if j.Chakra == nil {
			continue
		}
		f := d.timelineChart(j, unit, mul, xmax, false)
		figs = append(figs, named{timelinePlotName(j.Name), f})
		// Steps that fill less than a quarter of the run get a close-up.
		if f != nil && NewTimeline(j.Name, j.Chakra).End*mul < xmax/4 {
			figs = append(figs, named{timelinePlotName(j.Name) + "-zoom", d.timelineChart(j, unit, mul, xmax, true)})
		}
	}
	if d.Aggregated {
		figs = append(figs, d.largeFigures(unit, mul, xmax)...)
	}
	for _, p := range figs {
		if p.fig == nil {
			continue
		}
		svg, png, err := p.fig.render()
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", p.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, p.name+".svg"), svg, 0o644); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, p.name+".png"), png, 0o644); err != nil {
			return nil, err
		}
		out = append(out, p.name)
	}
	return out, nil
}

// queueChart plots the depth of the hottest lossless queues as steps,
// each legend entry with the queue's peak (the summary's number: the
// deepest the queue got, which readings may miss). The title says what a
// point is: one reading of the depth (the emulation's), or the deepest
// of the readings in its window (the simulator's, when they merged).
func (d Data) queueChart(unit string, mul, xmax float64) *figure {
	qs := d.find("switch_queue_depth_bytes")
	qs = slices.DeleteFunc(qs, func(s simlab.Series) bool { return s.Totals.Max <= 0 })
	if len(qs) == 0 {
		return nil
	}
	slices.SortStableFunc(qs, func(a, b simlab.Series) int { return cmp.Compare(b.Totals.Max, a.Totals.Max) })
	qs = qs[:min(len(qs), hotQueues)]
	yunit, ydiv := "KB", 1e3
	if qs[0].Totals.Max >= 2e6 {
		yunit, ydiv = "MB", 1e6
	}
	title := fmt.Sprintf("Egress queue depth, %d hottest queues", len(qs))
	if s := sampling(qs); s != "" {
		what := "depth at each reading"
		if strings.HasPrefix(s, "a reading every") {
			what = "deepest reading per point"
		}
		title += "\n(" + what + ": " + s + ")"
	}
	ch := &figure{Title: title, XLabel: "fabric time (" + unit + ")", YLabel: "queue depth (" + yunit + ")", XMax: xmax, Aligned: true}
	for _, s := range qs {
		name := d.portName(s.Label("node"), s.Label("port")) + " tc" + s.Label("tc")
		if peak := d.sum("switch_queue_peak_bytes", s.Labels...); peak > 0 {
			name += ", peak " + bytesText(peak)
		}
		l := lineSeries{Name: name, Step: true, Width: s.Width.Seconds() * mul}
		for _, p := range s.Points {
			l.X = append(l.X, p.T.Seconds()*mul)
			l.Y = append(l.Y, p.Max/ydiv)
		}
		ch.Lines = append(ch.Lines, l)
	}
	return ch
}

// flowChart plots each flow's delivered (perf) or sent (generators) rate.
func (d Data) flowChart(unit string, mul, xmax float64) *figure {
	var lines []lineSeries
	for _, s := range d.find("perf_flow_rate_bytes_per_second") {
		l := lineSeries{Name: s.Label("job") + " " + s.Label("from") + "→" + s.Label("to")}
		for _, p := range s.Points {
			l.X = append(l.X, p.T.Seconds()*mul)
			l.Y = append(l.Y, p.V*8/1e9) // bytes/s → Gb/s, as line rates are written
		}
		lines = append(lines, l)
	}
	for _, s := range d.find(simlab.AggJobRate) { // aggregated: a job's flows together
		l := lineSeries{Name: "job " + s.Label("job") + ", all its flows"}
		for _, p := range s.Points {
			l.X = append(l.X, p.T.Seconds()*mul)
			l.Y = append(l.Y, p.V*8/1e9)
		}
		lines = append(lines, l)
	}
	for _, s := range d.find("generator_tx_bytes_total") {
		l := lineSeries{Name: s.Label("job") + " " + s.Label("from") + "→" + s.Label("to")}
		for i := 1; i < len(s.Points); i++ {
			a, b := s.Points[i-1], s.Points[i]
			dt := b.T.Sub(a.T).Seconds()
			if dt <= 0 {
				continue
			}
			l.X = append(l.X, b.T.Seconds()*mul)
			l.Y = append(l.Y, (b.V-a.V)*8/dt/1e9)
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return nil
	}
	mean := func(l lineSeries) float64 {
		t := 0.0
		for _, y := range l.Y {
			t += y
		}
		return t / math.Max(float64(len(l.Y)), 1)
	}
	title := "Per-flow rate"
	if len(d.find(simlab.AggJobRate)) > 0 {
		title = "Delivered rate per job (aggregated: all its flows together)"
	}
	if s := sampling(d.find("perf_flow_rate_bytes_per_second")); s != "" {
		title += " (rate between readings: " + s + ")"
	}
	if len(lines) > maxFlows {
		slices.SortStableFunc(lines, func(a, b lineSeries) int { return cmp.Compare(mean(b), mean(a)) })
		lines = lines[:maxFlows]
		title += fmt.Sprintf(" (%d busiest flows)", maxFlows)
	}
	return &figure{Title: title, XLabel: "fabric time (" + unit + ")", YLabel: "rate (Gb/s)", Lines: lines, XMax: xmax, Aligned: true}
}

// pfcKinds name and colour the pause kinds (PauseXOFF, …).
var pfcKinds = []bandKind{
	PauseXOFF:   {"switch holds its upstream in XOFF", palette[3]},
	PauseEgress: {"switch egress queue paused by its peer", palette[1]},
	PauseNIC:    {"NIC paused by its switch", palette[0]},
}

// pfcChart draws a band row per link direction and priority that was
// paused (Pauses): a switch holding its upstream in XOFF, a switch
// egress queue paused by its peer, a NIC paused. The title says how the
// pause times were read.
func (d Data) pfcChart(unit string, mul, xmax float64) *figure {
	all := Pauses(d)
	if len(all) == 0 {
		return nil
	}
	var rows []bandRow
	for _, r := range all {
		row := bandRow{Name: r.Name, Kind: r.Kind}
		for _, s := range r.Spans {
			row.Spans = append(row.Spans, [2]float64{s.From.Seconds() * mul, s.To.Seconds() * mul})
		}
		rows = append(rows, row)
	}
	title := "PFC pause timeline per link direction and priority"
	if len(rows) > maxRows {
		title += fmt.Sprintf(" (first %d of %d)", maxRows, len(rows))
		rows = rows[:maxRows]
	}
	if s := all[0].Sampling; s != "" {
		title += "\n(pause time " + s + ")"
	}
	return &figure{Title: title, XLabel: "fabric time (" + unit + ")", Rows: rows, Kinds: pfcKinds, XMax: xmax, Aligned: true}
}

// busbwChart draws busbw per size for every collective job.
func (d Data) busbwChart() *figure {
	var sizes []int64
	for _, j := range d.Jobs {
		for _, r := range j.Collective {
			if !slices.Contains(sizes, r.Size) {
				sizes = append(sizes, r.Size)
			}
		}
	}
	if len(sizes) == 0 {
		return nil
	}
	slices.Sort(sizes)
	ch := &figure{Title: "Collective bus bandwidth per size (nccl-tests busbw)", XLabel: "message size", YLabel: "busbw (Gb/s)"}
	for _, s := range sizes {
		ch.Categories = append(ch.Categories, sizeName(s))
	}
	for _, j := range d.Jobs {
		if len(j.Collective) == 0 {
			continue
		}
		g := barGroup{Name: j.Name, Values: make([]float64, len(sizes))}
		for i := range g.Values {
			g.Values[i] = math.NaN()
		}
		for _, r := range j.Collective {
			g.Values[slices.Index(sizes, r.Size)] = r.BusBW * 8
		}
		ch.Groups = append(ch.Groups, g)
	}
	return ch
}

// sizeName writes a byte count the nccl-tests way (binary units).
func sizeName(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "GB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KB"
	}
	return strconv.FormatInt(n, 10) + "B"
}
