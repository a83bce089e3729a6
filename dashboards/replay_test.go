package dashboards

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/rocelab/rocelab/dashboards/web"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/scenarios/run"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
)

// simReport runs example 01 (a 3:1 incast with head-of-line blocking) in
// the simulator and returns its report directory.
func simReport(t *testing.T) string {
	t.Helper()
	sc, err := scenario.Load("../examples/01-incast-hol/scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := run.Sim(context.Background(), sc, run.Options{ReportDir: dir}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRecording: a simulated incast's report replays with the pauses that
// spread upstream, queue depths and per-flow rates.
func TestRecording(t *testing.T) {
	rec, err := web.LoadRecording(simReport(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Frames) < 100 || rec.Step <= 0 {
		t.Fatalf("%d frames of %g s", len(rec.Frames), rec.Step)
	}
	var pfc, queued, flowing int
	for _, f := range rec.Frames {
		for _, l := range f.Links {
			if l.PFCAB || l.PFCBA {
				pfc++
				break
			}
		}
		for _, q := range f.Queues {
			if q > 0 {
				queued++
				break
			}
		}
		for _, r := range f.QPs {
			if r.Bps > 0 {
				flowing++
				break
			}
		}
	}
	if pfc == 0 || queued == 0 || flowing == 0 {
		t.Errorf("frames with PFC %d, with a queue %d, with a flow %d; want all > 0", pfc, queued, flowing)
	}
	if _, err := web.LoadRecording(t.TempDir()); err == nil {
		t.Error("an empty directory replayed")
	}
}

// TestReplayInBrowser plays the report in headless Chromium: one element
// per node, frames advancing, the slider shown, a pause mark lit at some
// point, no console errors.
func TestReplayInBrowser(t *testing.T) {
	chromium := testenv.RequireTool(t, "chromium")
	dir := simReport(t)
	rec, err := web.LoadRecording(dir)
	if err != nil {
		t.Fatal(err)
	}
	nodes := len(rec.Layout.Ports) // every node of the topology, drawn one box each
	h, _, err := Replay(dir, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, h) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	br := newBrowser(t, chromium)
	if _, err := chromedpNavigate(br, "http://"+ln.Addr().String()+"/"); err != nil {
		t.Fatal(err)
	}
	if !br.waitJS(t, fmt.Sprintf(`document.querySelectorAll("#boxes [data-node]").length === %d && !document.getElementById("replay").hidden`, nodes), 20*time.Second) {
		t.Fatalf("the replay page did not draw the topology's %d nodes and its slider", nodes)
	}
	if !br.waitJS(t, `document.querySelectorAll("circle.pfc.on").length > 0`, 30*time.Second) {
		t.Error("no PFC mark lit during the replay of an incast that pauses")
	}
	if !br.waitJS(t, `Number(document.body.dataset.frames) > 20`, 20*time.Second) {
		t.Error("frames did not advance")
	}
	if errs := br.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}
