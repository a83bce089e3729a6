package dashboards

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rocelab/rocelab/dashboards/web"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/scenarios/run"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
)

// maxFrameBytes bounds the JSON of one replay frame of a layout of links
// drawn lines: a link state is at most "{"util_ab":0.123,"util_ba":0.123,
// "pfc_ab":true,"pfc_ba":true}" without names (bundled) or with them, a
// flow or a queue at most one name and a number.
func maxFrameBytes(links int, named bool) int {
	per := 72
	if named {
		per += 160
	}
	return 256 + links*per + web.MaxReplayQPs*160 + web.MaxReplayQueues*96
}

// aggregatedReport runs the 3-zone fixture of lab/scenarios/run with
// aggregated telemetry (a large fabric's) and returns its report.
func aggregatedReport(t *testing.T) string {
	t.Helper()
	sc, err := scenario.Load("../lab/scenarios/run/testdata/multizone/scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := run.Sim(context.Background(), sc, run.Options{ReportDir: dir, Aggregate: run.AggregateOn}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkReplaySize checks every frame of a recording against
// maxFrameBytes and returns the frames' JSON in all.
func checkReplaySize(t *testing.T, rec *web.Recording) int {
	t.Helper()
	total := 0
	named := len(rec.Layout.Links) <= web.MaxReplayLinks
	for i, f := range rec.Frames {
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		total += len(b)
		if len(f.Links) > web.MaxReplayLinks || len(f.QPs) > web.MaxReplayQPs || len(f.Queues) > web.MaxReplayQueues {
			t.Fatalf("frame %d: %d links, %d flows, %d queues: over the bounds", i, len(f.Links), len(f.QPs), len(f.Queues))
		}
		if limit := maxFrameBytes(len(rec.Layout.Links), named); len(b) > limit {
			t.Fatalf("frame %d: %d bytes of JSON, over %d", i, len(b), limit)
		}
	}
	return total
}

// TestReplayAggregated: an aggregated report (no series per port or
// flow) replays its switches' utilisation, pauses and deepest queues
// and its jobs' rates, in frames within the bound.
func TestReplayAggregated(t *testing.T) {
	rec, err := web.LoadRecording(aggregatedReport(t))
	if err != nil {
		t.Fatal(err)
	}
	total := checkReplaySize(t, rec)
	t.Logf("%d frames, %d bytes of frames, %d links drawn", len(rec.Frames), total, len(rec.Layout.Links))
	var busy, paused, queued, job bool
	for _, f := range rec.Frames {
		for _, l := range f.Links {
			busy = busy || l.UtilAB > 0.1 || l.UtilBA > 0.1
			paused = paused || l.PFCAB || l.PFCBA
		}
		queued = queued || len(f.Queues) > 0
		for _, q := range f.QPs {
			job = job || q.Name == "job perm (all its flows)" && q.Bps > 0
		}
	}
	if !busy || !paused || !queued || !job {
		t.Errorf("busy link %v, paused %v, a queue %v, the job's rate %v: want all", busy, paused, queued, job)
	}
}

// TestReplayLargeInBrowser plays an aggregated report in headless
// Chromium and logs how long the page took to draw and to play frames.
// ROCELAB_REPLAY_REPORT names another report to play instead (a
// mid-size run's, to measure it).
func TestReplayLargeInBrowser(t *testing.T) {
	chromium := testenv.RequireTool(t, "chromium")
	dir := os.Getenv("ROCELAB_REPLAY_REPORT")
	if dir == "" {
		dir = aggregatedReport(t)
	}
	t0 := time.Now()
	rec, err := web.LoadRecording(dir)
	if err != nil {
		t.Fatal(err)
	}
	load := time.Since(t0)
	total := checkReplaySize(t, rec)
	view, _ := json.Marshal(rec.Layout)
	h, _, err := Replay(dir, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	url := serveView(t, h)
	br := newBrowser(t, chromium)
	t1 := time.Now()
	if _, err := chromedpNavigate(br, url); err != nil {
		t.Fatal(err)
	}
	if !br.waitJS(t, `!document.getElementById("replay").hidden && Number(document.body.dataset.frames) > 0`, 60*time.Second) {
		t.Fatal("the replay page did not draw and play its first frame")
	}
	first := time.Since(t1)
	if !br.waitJS(t, `Number(document.body.dataset.frames) > 20`, 60*time.Second) {
		t.Error("frames did not advance")
	}
	played := time.Since(t1)
	// What the page spends on a frame, laid out: the largest one,
	// alternating with an idle one, so that every pause of the largest
	// starts and ends (timeline events) each time (apply is app.js's).
	var largest []byte
	var idle web.Frame
	for _, f := range rec.Frames {
		if b, _ := json.Marshal(f); len(b) > len(largest) {
			largest = b
			idle = web.Frame{FabricTime: f.FabricTime, Links: make([]web.LinkState, len(f.Links))}
		}
	}
	idleJSON, _ := json.Marshal(idle)
	perFrame, err := chromedp.Run(br.ctx, chromedp.Evaluate[float64](`(() => { const f = `+string(largest)+`, g = `+string(idleJSON)+`;
		apply(f); apply(g); document.body.offsetHeight; // warm up
		const t0 = performance.now();
		for (let i = 0; i < 5; i++) { apply(f); document.body.offsetHeight; apply(g); document.body.offsetHeight; }
		return (performance.now() - t0) / 10; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if errs := br.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
	t.Logf("%s: load %v; %d frames, %d bytes of frames (%d a frame on average, %d the largest), layout %d bytes, %d lines; "+
		"page drawn with its first frame in %v, 20 frames played in %v, %.1f ms a frame (the largest and an idle one in turn)", filepath.Base(dir), load.Round(time.Millisecond),
		len(rec.Frames), total, total/max(len(rec.Frames), 1), len(largest), len(view), len(rec.Layout.Links), first.Round(time.Millisecond),
		played.Round(time.Millisecond), perFrame)
}
