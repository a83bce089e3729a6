package web

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/internal/readcap"

	"github.com/rocelab/rocelab/lab/scenarios/report"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/topologies/graph"
)

// MaxReplayFrames bounds a recording: longer series are sampled.
const MaxReplayFrames = 4000

// frameEps absorbs rounding when a point's start or end falls on a frame
// boundary (in frames).
const frameEps = 1e-9

// Recording is a scenario report turned into frames.
type Recording struct {
	Title  string
	Layout graph.Layout
	Frames []Frame
	Step   float64 // fabric seconds between frames
	// Chakra are the timelines of the report's chakra jobs.
	Chakra []report.Timeline
}

// seriesFile is the part of a report's metrics.json a replay reads.
type seriesFile struct {
	Scenario string `json:"scenario"`
	Series   []struct {
		Series string            `json:"series"`
		Labels map[string]string `json:"labels"`
		Width  float64           `json:"point_width_s"`
		Points []struct {
			T   float64 `json:"time_s"`
			V   float64 `json:"value"`
			Max float64 `json:"max"`
		} `json:"points"`
	} `json:"series"`
	// Jobs' chakra runs (report.DecodeChakra reads them).
	Jobs []struct {
		Name   string          `json:"Name"`
		Chakra json.RawMessage `json:"Chakra"`
	} `json:"jobs"`
}

// check refuses a series file whose times or widths are not finite,
// non-negative seconds (a hand-edited or corrupt report), naming the
// first such point, so that the replay grid is built from sane numbers.
func (sf *seriesFile) check() error {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) || v < 0 }
	for i, s := range sf.Series {
		if bad(s.Width) {
			return fmt.Errorf("series %d (%s): point_width_s %v: want a finite, non-negative number of seconds", i, s.Series, s.Width)
		}
		for j, p := range s.Points {
			if bad(p.T) {
				return fmt.Errorf("series %d (%s): point %d: t %v: want a finite, non-negative number of seconds", i, s.Series, j, p.T)
			}
			if math.IsNaN(p.Max) || math.IsInf(p.Max, 0) {
				return fmt.Errorf("series %d (%s): point %d: max %v: want a finite number", i, s.Series, j, p.Max)
			}
		}
	}
	return nil
}

// LoadRecording reads a report directory written by `rocelab run
// --report` (either clock): its layout and its time series — queue depth,
// PFC pause state per port and direction, per-flow rates — and the
// timelines of its chakra jobs.
func LoadRecording(dir string) (*Recording, error) {
	var lay report.Layout
	b, err := readcap.ReadFile(filepath.Join(dir, report.LayoutFile), readcap.Config, "report layout")
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w (a report of this rocelab version has it)", dir, err)
	}
	if err := json.Unmarshal(b, &lay); err != nil {
		return nil, fmt.Errorf("replay %s: %s: %w", dir, report.LayoutFile, err)
	}
	f, err := readcap.Open(filepath.Join(dir, "metrics.json"), readcap.Report, "report's metrics.json")
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", dir, err)
	}
	defer f.Close()
	var sf seriesFile
	if err := json.NewDecoder(f).Decode(&sf); err != nil {
		return nil, fmt.Errorf("replay %s: metrics.json: %w", dir, err)
	}
	if err := sf.check(); err != nil {
		return nil, fmt.Errorf("replay %s: metrics.json: %w", dir, err)
	}
	rec := &Recording{Title: lay.Scenario + " (replay)", Layout: lay.Layout}
	for _, j := range sf.Jobs {
		if len(j.Chakra) == 0 || string(j.Chakra) == "null" {
			continue
		}
		run, err := report.DecodeChakra(j.Chakra)
		if err != nil {
			return nil, fmt.Errorf("replay %s: metrics.json: job %s: %w", dir, j.Name, err)
		}
		rec.Chakra = append(rec.Chakra, report.NewTimeline(j.Name, run))
	}
	// The frame grid: the finest point width, at most MaxReplayFrames.
	var end float64
	for _, s := range sf.Series {
		if s.Width > 0 && (rec.Step == 0 || s.Width < rec.Step) {
			rec.Step = s.Width
		}
		if n := len(s.Points); n > 0 {
			end = max(end, s.Points[n-1].T+s.Width)
		}
	}
	if rec.Step <= 0 || end <= 0 {
		return nil, fmt.Errorf("replay %s: the report has no time series", dir)
	}
	// In floating point first: a grid finer than MaxReplayFrames (a point
	// width of 1e-30 s) is coarsened before it becomes an int.
	n := MaxReplayFrames
	if f := end/rec.Step + 0.5; f <= MaxReplayFrames {
		n = max(int(f), 1)
	} else {
		rec.Step = end / MaxReplayFrames
	}
	frames := make([]Frame, n)
	for i := range frames {
		frames[i] = Frame{FabricTime: float64(i) * rec.Step, Queues: map[string]int{}, Nodes: map[string]string{}}
	}
	portName := func(node, idx string) string {
		i, err := strconv.Atoi(idx)
		if err != nil || i < 0 || i >= len(lay.Layout.Ports[node]) {
			return idx
		}
		return lay.Layout.Ports[node][i]
	}
	sr := &seriesRead{paused: map[string][]bool{}, bps: map[string][]float64{}, flows: map[string][]float64{},
		swUtil: map[string][]float64{}, swPaused: map[string][]bool{}, swDepth: map[string][]float64{}}
	val, set := make([]float64, n), make([]bool, n) // one series' frames, reused
	var touched []int
	capacity := nodeCapacity(lay.Layout)
	for _, s := range sf.Series {
		// at calls fn once for every frame the series covers, with the
		// highest of its points in that frame (a point covers the frames
		// that overlap [T, T+width)): series add up in a frame, points of
		// one series never do.
		at := func(fn func(i int, v float64)) {
			touched = touched[:0]
			for _, p := range s.Points {
				lo := int(math.Floor(p.T/rec.Step + frameEps))
				hi := int(math.Ceil((p.T+s.Width)/rec.Step - frameEps))
				hi = max(hi, lo+1) // a point narrower than a frame still shows
				for i := max(lo, 0); i < hi && i < n; i++ {
					if !set[i] {
						val[i], set[i] = p.Max, true
						touched = append(touched, i)
					} else {
						val[i] = max(val[i], p.Max)
					}
				}
			}
			for _, i := range touched {
				fn(i, val[i])
				set[i] = false
			}
		}
		// rate calls fn for every frame between two consecutive readings
		// of a counter with its rate between them (per second).
		rate := func(fn func(i int, r float64)) {
			for j := 1; j < len(s.Points); j++ {
				a, b := s.Points[j-1], s.Points[j]
				if b.T <= a.T {
					continue
				}
				r := max(b.V-a.V, 0) / (b.T - a.T)
				lo := int(math.Floor(a.T/rec.Step + frameEps))
				hi := max(int(math.Ceil(b.T/rec.Step-frameEps)), lo+1)
				for i := max(lo, 0); i < hi && i < n; i++ {
					fn(i, r)
				}
			}
		}
		node := s.Labels["node"]
		switch s.Series {
		case "switch_queue_depth_bytes":
			k := node + ":" + portName(node, s.Labels["port"])
			at(func(i int, v float64) { frames[i].Queues[k] += int(v) })
		case "switch_queue_paused", "switch_pg_xoff", "nic_paused":
			dir, port := "rx", portName(node, s.Labels["port"])
			if s.Series == "switch_pg_xoff" {
				dir = "tx"
			}
			if h, nic, ok := strings.Cut(node, ":"); ok {
				node, port = h, nic
			}
			p := sr.boolsOf(sr.paused, node+":"+port+":"+dir, n)
			at(func(i int, v float64) { p[i] = p[i] || v > 0 })
		case "switch_port_tx_bytes_total", "switch_port_rx_bytes_total":
			// A counter: its rate between consecutive readings holds over
			// the frames between them.
			dir := "tx"
			if s.Series == "switch_port_rx_bytes_total" {
				dir = "rx"
			}
			b := sr.floatsOf(sr.bps, node+":"+portName(node, s.Labels["port"])+":"+dir, n)
			rate(func(i int, r float64) { b[i] = max(b[i], r) })
		case "perf_flow_rate_bytes_per_second":
			if len(s.Points) == 0 { // a summarized report's flow without points
				continue
			}
			f := sr.floatsOf(sr.flows, s.Labels["job"]+" "+s.Labels["from"]+"→"+s.Labels["to"], n)
			at(func(i int, v float64) { f[i] = v })
		case simlab.AggJobRate:
			f := sr.floatsOf(sr.flows, "job "+s.Labels["job"]+" (all its flows)", n)
			at(func(i int, v float64) { f[i] = v })
		case simlab.AggSwitchTx:
			if c := capacity[node]; c > 0 {
				u := sr.floatsOf(sr.swUtil, node, n)
				rate(func(i int, r float64) { u[i] = max(u[i], r*8/c) })
			}
		case simlab.AggSwitchPaused:
			p := sr.boolsOf(sr.swPaused, node, n)
			rate(func(i int, r float64) { p[i] = p[i] || r > 0 })
		case simlab.AggSwitchDepth:
			d := sr.floatsOf(sr.swDepth, node, n)
			at(func(i int, v float64) { d[i] = v })
		}
	}
	rec.Frames = frames
	rec.assemble(lay.Layout, sr)
	return rec, nil
}
