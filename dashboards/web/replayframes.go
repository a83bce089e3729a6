package web

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/rocelab/rocelab/topologies/graph"
)

// A replay's frames stay small whatever the size of the fabric: a frame
// carries at most MaxReplayLinks link states (a layout with more is
// played bundled: one line per pair of boxes), MaxReplayQPs flow rates
// (the busiest) and MaxReplayQueues queues (the deepest), and idle links
// as "{}" (LinkState's fields are omitted when zero; the page takes a
// link's names from the layout). seed-24k's layout has 75,264 links
// between 186 boxes: 824 bundles.
const (
	MaxReplayLinks  = 1024
	MaxReplayQPs    = 32
	MaxReplayQueues = 64
)

// seriesRead is what LoadRecording read of a report's series, per frame:
// by port ("node:port:rx|tx") the pause state and byte rate, by flow its
// rate, and, from an aggregated report (simlab.SamplerSpec.Aggregate),
// by switch its utilisation (its ports' bytes over their line rates),
// whether any of its queues was paused and its deepest queue.
type seriesRead struct {
	paused   map[string][]bool
	bps      map[string][]float64
	flows    map[string][]float64
	swUtil   map[string][]float64
	swPaused map[string][]bool
	swDepth  map[string][]float64
}

func (sr *seriesRead) boolsOf(m map[string][]bool, k string, n int) []bool {
	if m[k] == nil {
		m[k] = make([]bool, n)
	}
	return m[k]
}

func (sr *seriesRead) floatsOf(m map[string][]float64, k string, n int) []float64 {
	if m[k] == nil {
		m[k] = make([]float64, n)
	}
	return m[k]
}

// nodeCapacity is the line rate of every node's links in the layout,
// summed, in bits per second.
func nodeCapacity(l graph.Layout) map[string]float64 {
	out := map[string]float64{}
	for _, k := range l.Links {
		out[k.A] += float64(k.Rate)
		out[k.B] += float64(k.Rate)
	}
	return out
}

// linkSource is where one direction of a layout link reads its state in
// every frame (nil: nowhere).
type linkSource struct {
	bps    []float64 // bytes per second
	util   []float64 // 0..1 (a switch's, aggregated)
	rate   float64   // the link's, bits per second
	paused [][]bool
}

func (s linkSource) at(i int) (util float64, pfc bool) {
	switch {
	case s.bps != nil && s.rate > 0:
		util = min(s.bps[i]*8/s.rate, 1)
	case s.util != nil:
		util = min(s.util[i], 1)
	}
	for _, p := range s.paused {
		pfc = pfc || p[i]
	}
	return util, pfc
}

// direction returns the source of link l's direction from (fromPort) to
// (toPort): what the sender's port sent, or what the receiving switch
// port took in (a host's NIC has no byte series), or, aggregated, the
// utilisation of the sending switch, else of the receiving one; paused
// when the sender's egress was paused or the receiver held it in XOFF,
// or, aggregated, when the sending switch had a paused queue.
func (sr *seriesRead) direction(l graph.Link, from, fromPort, to, toPort string) linkSource {
	s := linkSource{rate: float64(l.Rate)}
	switch {
	case sr.bps[from+":"+fromPort+":tx"] != nil:
		s.bps = sr.bps[from+":"+fromPort+":tx"]
	case sr.bps[to+":"+toPort+":rx"] != nil:
		s.bps = sr.bps[to+":"+toPort+":rx"]
	case sr.swUtil[from] != nil:
		s.util = sr.swUtil[from]
	case sr.swUtil[to] != nil:
		s.util = sr.swUtil[to]
	}
	for _, p := range [][]bool{sr.paused[from+":"+fromPort+":rx"], sr.paused[to+":"+toPort+":tx"], sr.swPaused[from]} {
		if p != nil {
			s.paused = append(s.paused, p)
		}
	}
	return s
}

// bundle is one drawn line of a bundled layout: the layout links between
// two boxes, each with its sources oriented as the bundle.
type bundle struct {
	ab, ba []linkSource
}

// assemble fills the recording's frames with link states, flow rates and
// switch queues from sr, and, for a layout of more than MaxReplayLinks
// links, bundles them (rec.Layout becomes the bundled drawing).
func (rec *Recording) assemble(lay graph.Layout, sr *seriesRead) {
	var bundles []*bundle
	var drawn []graph.Link
	byPair := map[[2]string]int{}
	bundled := len(lay.Links) > MaxReplayLinks
	for _, l := range lay.Links {
		ab := sr.direction(l, l.A, l.APort, l.B, l.BPort)
		ba := sr.direction(l, l.B, l.BPort, l.A, l.APort)
		if !bundled {
			bundles = append(bundles, &bundle{ab: []linkSource{ab}, ba: []linkSource{ba}})
			drawn = append(drawn, l)
			continue
		}
		key, flip := [2]string{l.ABox, l.BBox}, false
		if l.BBox < l.ABox {
			key, flip = [2]string{l.BBox, l.ABox}, true
		}
		i, ok := byPair[key]
		if !ok {
			i = len(bundles)
			byPair[key] = i
			bundles = append(bundles, &bundle{})
			b := l
			b.APort, b.BPort, b.Rate = "", "", 0
			if flip {
				b = graph.Link{A: l.B, B: l.A, ABox: l.BBox, BBox: l.ABox, Plane: l.Plane}
			}
			drawn = append(drawn, b)
		}
		if flip {
			ab, ba = ba, ab
		}
		bundles[i].ab = append(bundles[i].ab, ab)
		bundles[i].ba = append(bundles[i].ba, ba)
		drawn[i].Rate += l.Rate
	}
	if bundled {
		// A bundle is named by its boxes and the links it stands for.
		for i := range drawn {
			n := strconv.Itoa(len(bundles[i].ab)) + " links"
			drawn[i].A, drawn[i].B = drawn[i].ABox, drawn[i].BBox
			drawn[i].APort, drawn[i].BPort = n, n
		}
		lay.Links = drawn
		lay.Ports = nil // the page draws no port of a bundle
		rec.Layout = lay
	}
	// The busiest flows, by their mean rate over the run.
	mean := func(v []float64) float64 {
		t := 0.0
		for _, x := range v {
			t += x
		}
		return t / math.Max(float64(len(v)), 1)
	}
	names := make([]string, 0, len(sr.flows))
	for k := range sr.flows {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(mean(sr.flows[b]), mean(sr.flows[a])), cmp.Compare(a, b))
	})
	names = names[:min(len(names), MaxReplayQPs)]
	slices.Sort(names)
	for i := range rec.Frames {
		f := &rec.Frames[i]
		f.Links = make([]LinkState, len(bundles))
		for j, b := range bundles {
			f.Links[j] = b.state(i)
			if !bundled {
				l := drawn[j]
				f.Links[j].A, f.Links[j].APort, f.Links[j].B, f.Links[j].BPort = l.A, l.APort, l.B, l.BPort
			}
		}
		for _, k := range names {
			f.QPs = append(f.QPs, Rate{Name: k, Bps: sr.flows[k][i]})
		}
		for node, d := range sr.swDepth {
			if d[i] > 0 {
				f.Queues[node] = int(d[i])
			}
		}
		trimQueues(f.Queues, MaxReplayQueues)
	}
}

// state is a bundle's state in frame i: the mean utilisation of its
// links in each direction, paused if any of them was.
func (b *bundle) state(i int) LinkState {
	var s LinkState
	for k := range b.ab {
		u, p := b.ab[k].at(i)
		s.UtilAB += u / float64(len(b.ab))
		s.PFCAB = s.PFCAB || p
		u, p = b.ba[k].at(i)
		s.UtilBA += u / float64(len(b.ba))
		s.PFCBA = s.PFCBA || p
	}
	s.UtilAB, s.UtilBA = round3(s.UtilAB), round3(s.UtilBA)
	return s
}

// round3 rounds a utilisation to three decimals (the page shows less).
func round3(u float64) float64 { return math.Round(u*1000) / 1000 }

// trimQueues keeps the n deepest queues of q (ties by name).
func trimQueues(q map[string]int, n int) {
	if len(q) <= n {
		return
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(q[b], q[a]), cmp.Compare(a, b)) })
	for _, k := range keys[n:] {
		delete(q, k)
	}
}
