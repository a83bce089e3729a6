package dashboards

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/rocelab/rocelab/dashboards/web"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/scenarios/run"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
)

// chakraReport runs example 09's microbenchmark (ASTRA-sim's 4-rank 1 MB
// all-reduce, a chakra job) in the simulator and returns its report
// directory.
func chakraReport(t *testing.T) string {
	t.Helper()
	sc, err := scenario.Load("../examples/09-chakra/microbench.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := run.Sim(context.Background(), sc, run.Options{ReportDir: dir}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRecordingChakra: a report with a chakra job replays with its
// timeline: a row per rank, the all-reduce on each, within the run.
func TestRecordingChakra(t *testing.T) {
	rec, err := web.LoadRecording(chakraReport(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Chakra) != 1 {
		t.Fatalf("%d chakra timelines, want 1", len(rec.Chakra))
	}
	tl := rec.Chakra[0]
	if tl.Job != "allreduce" || tl.Ranks != 4 || len(tl.Rows) != 4 {
		t.Fatalf("timeline of %q: %d ranks, %d rows; want allreduce, 4, 4", tl.Job, tl.Ranks, len(tl.Rows))
	}
	length := rec.Info().Length
	for _, r := range tl.Rows {
		if len(r.Spans) == 0 {
			t.Errorf("row %s has no spans", r.Name)
		}
		for _, s := range r.Spans {
			if k := tl.Kinds[s.Kind].Name; s.Lane > 0 && k != "ALL_REDUCE" && k != "waiting for peers" {
				t.Errorf("row %s: a %s span in lane %d", r.Name, k, s.Lane)
			}
			if s.From < 0 || s.To < s.From || s.To > length {
				t.Errorf("row %s: span %g–%g s outside the %g s replay", r.Name, s.From, s.To, length)
			}
		}
	}
}

// TestChakraReplayInBrowser plays a report with a chakra job in headless
// Chromium: the timeline shows a row per rank with its spans and legend,
// and its cursor follows the replay's time.
func TestChakraReplayInBrowser(t *testing.T) {
	chromium := testenv.RequireTool(t, "chromium")
	dir := chakraReport(t)
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
	if !br.waitJS(t, `!document.getElementById("chakra").hidden && document.querySelectorAll('#chakra svg[data-job="allreduce"] g[data-rank]').length === 4`, 20*time.Second) {
		t.Fatal("the replay did not draw the chakra job's timeline with a row per rank")
	}
	for _, c := range []struct{ what, expr string }{
		{"every row has spans", `[...document.querySelectorAll('#chakra g[data-rank]')].every(g => g.querySelectorAll("rect.span").length > 0)`},
		{"spans are placed on the time axis", `[...document.querySelectorAll("#chakra rect.span")].every(r => Number(r.getAttribute("x")) >= 170 && Number(r.getAttribute("width")) > 0)`},
		{"the legend names the all-reduce", `document.querySelector("#chakra .chakralegend").textContent.includes("ALL_REDUCE")`},
		{"the rows are named by rank and NIC", `document.querySelector('#chakra g[data-rank="0"] text').textContent === "rank 0 host1:gpu0"`},
	} {
		if !br.waitJS(t, c.expr, 5*time.Second) {
			t.Errorf("%s: no (%s)", c.what, c.expr)
		}
	}
	// The cursor moves with the replay: seek to the middle of the run.
	cursor := `Number(document.querySelector("#chakra line.cursor").getAttribute("x1"))`
	if !br.waitJS(t, `(() => { const s = document.getElementById("slider"); s.value = 500; s.dispatchEvent(new Event("change")); return true; })()`, time.Second) {
		t.Fatal("could not move the slider")
	}
	if !br.waitJS(t, cursor+` > 500`, 20*time.Second) {
		t.Error("the timeline's cursor did not follow the replay to mid-run (x1 ≤ 500 of 1000)")
	}
	br.screenshot(t, "replay-chakra.png")
	if errs := br.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}
