package web

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/topologies/graph"
)

// bigLayout is a layout of 3 leaf boxes of 10 switches each, all under
// one spine box of 40 switches: every leaf switch has a link to every
// spine switch (1,200 links, 3 box pairs), drawn spine first in half of
// them (a bundle flips those).
func bigLayout() graph.Layout {
	var l graph.Layout
	for b := range 3 {
		for s := range 10 {
			leaf := fmt.Sprintf("leaf%d-%d", b, s)
			for k := range 40 {
				spine := fmt.Sprintf("spine%d", k)
				lk := graph.Link{A: leaf, APort: fmt.Sprintf("p%d", k), B: spine, BPort: fmt.Sprintf("p%d", 10*b+s),
					ABox: fmt.Sprintf("leaves%d", b), BBox: "spines", Rate: 400 * clock.Gbps}
				if k%2 == 1 {
					lk.A, lk.APort, lk.B, lk.BPort, lk.ABox, lk.BBox = lk.B, lk.BPort, lk.A, lk.APort, lk.BBox, lk.ABox
				}
				l.Links = append(l.Links, lk)
			}
		}
	}
	l.Ports = map[string][]string{"spine0": {"p0"}}
	return l
}

// TestAssembleBundles: a layout of more links than MaxReplayLinks plays
// one line per pair of boxes, each direction the mean utilisation of its
// links, paused if any was, oriented as the bundle; idle links are "{}";
// flows are cut to the MaxReplayQPs busiest and queues to the
// MaxReplayQueues deepest.
func TestAssembleBundles(t *testing.T) {
	lay := bigLayout()
	const n = 4
	sr := &seriesRead{paused: map[string][]bool{}, bps: map[string][]float64{}, flows: map[string][]float64{},
		swUtil: map[string][]float64{}, swPaused: map[string][]bool{}, swDepth: map[string][]float64{}}
	// Aggregated: leaf switches of box 0 send at 50 % in frame 1; one of
	// them has a paused queue in frame 2. Box 1's spine-bound links are
	// idle, box 2 has no series.
	for s := range 10 {
		u := sr.floatsOf(sr.swUtil, fmt.Sprintf("leaf0-%d", s), n)
		u[1] = 0.5
		sr.floatsOf(sr.swUtil, fmt.Sprintf("leaf1-%d", s), n)
		sr.floatsOf(sr.swDepth, fmt.Sprintf("leaf0-%d", s), n)[3] = float64(1000 * (s + 1))
	}
	sr.boolsOf(sr.swPaused, "leaf0-3", n)[2] = true
	for k := range 100 {
		sr.floatsOf(sr.flows, fmt.Sprintf("flow%03d", k), n)[0] = float64(k)
	}
	rec := &Recording{Layout: lay}
	for i := range n {
		rec.Frames = append(rec.Frames, Frame{FabricTime: float64(i), Queues: map[string]int{}, Nodes: map[string]string{}})
	}
	rec.assemble(lay, sr)
	if len(rec.Layout.Links) != 3 || rec.Layout.Ports != nil {
		t.Fatalf("bundled layout: %d links, ports %v; want 3, none", len(rec.Layout.Links), rec.Layout.Ports)
	}
	b0 := rec.Layout.Links[0]
	if want := (graph.Link{A: "leaves0", APort: "400 links", B: "spines", BPort: "400 links", ABox: "leaves0", BBox: "spines", Rate: 400 * 400 * clock.Gbps}); b0 != want {
		t.Errorf("bundle 0: %+v, want %+v", b0, want)
	}
	// Frame 1: leaves0 → spines at 0.5 in every link; spines → leaves0 has
	// no spine series, so it reads the receiving leaf's 0.5 too.
	want := []LinkState{{UtilAB: 0.5, UtilBA: 0.5}, {}, {}}
	if d := cmp.Diff(want, rec.Frames[1].Links); d != "" {
		t.Errorf("frame 1 (-want +got):\n%s", d)
	}
	// Frame 2: leaf0-3 paused: its bundle's direction towards the spines.
	if l := rec.Frames[2].Links[0]; !l.PFCAB || l.PFCBA {
		t.Errorf("frame 2: bundle 0 %+v, want paused leaves → spines only", l)
	}
	if b, _ := json.Marshal(rec.Frames[0].Links[1]); string(b) != "{}" {
		t.Errorf("an idle link is %s, want {}", b)
	}
	f0 := rec.Frames[0]
	if len(f0.QPs) != MaxReplayQPs || f0.QPs[0].Name != "flow068" || f0.QPs[MaxReplayQPs-1].Name != "flow099" {
		t.Errorf("flows: %d, from %v to %v; want the %d busiest, by name", len(f0.QPs), f0.QPs[0], f0.QPs[len(f0.QPs)-1], MaxReplayQPs)
	}
	if q := rec.Frames[3].Queues; len(q) != 10 || q["leaf0-9"] != 10000 {
		t.Errorf("frame 3 queues %v", q)
	}
	q := map[string]int{}
	for k := range 100 {
		q[fmt.Sprint(k)] = k
	}
	trimQueues(q, MaxReplayQueues)
	if len(q) != MaxReplayQueues || q["99"] != 99 || q["36"] != 36 || q["35"] != 0 {
		t.Errorf("trimQueues kept %d: want the %d deepest", len(q), MaxReplayQueues)
	}
}

// TestAssembleSmall: a layout of up to MaxReplayLinks links plays every
// link, named, as before.
func TestAssembleSmall(t *testing.T) {
	lay := graph.Layout{Links: []graph.Link{{A: "h1", APort: "gpu0", B: "sw", BPort: "p1", Rate: 8e9}}}
	sr := &seriesRead{paused: map[string][]bool{}, bps: map[string][]float64{"sw:p1:rx": {5e8}}, flows: map[string][]float64{},
		swUtil: map[string][]float64{}, swPaused: map[string][]bool{"sw": {true}}, swDepth: map[string][]float64{}}
	rec := &Recording{Layout: lay, Frames: []Frame{{Queues: map[string]int{}}}}
	rec.assemble(lay, sr)
	want := LinkState{A: "h1", APort: "gpu0", B: "sw", BPort: "p1", UtilAB: 0.5, PFCBA: true}
	if d := cmp.Diff(want, rec.Frames[0].Links[0]); d != "" || len(rec.Layout.Links) != 1 {
		t.Errorf("link (-want +got):\n%s", d)
	}
}
