package dashboards

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/dashboards/web"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/scenarios/report"
	"github.com/rocelab/rocelab/lab/scenarios/run"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
	"github.com/rocelab/rocelab/topologies/graph"
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
	// Link utilisation comes from the ports' byte series: the incast's
	// bottleneck into r runs full, and no link reads above its rate.
	full := 0
	for _, f := range rec.Frames {
		for _, l := range f.Links {
			if l.UtilAB > 1 || l.UtilBA > 1 {
				t.Fatalf("frame at %g s: link %s-%s utilisation %g/%g, above 1", f.FabricTime, l.A, l.B, l.UtilAB, l.UtilBA)
			}
			if l.A == "sw2" && l.B == "r" && l.UtilAB >= 0.9 || l.B == "sw2" && l.A == "r" && l.UtilBA >= 0.9 {
				full++
			}
		}
	}
	if full == 0 {
		t.Error("the incast's bottleneck sw2 → r never reads as full (utilisation >= 0.9)")
	}
	if _, err := web.LoadRecording(t.TempDir()); err == nil {
		t.Error("an empty directory replayed")
	}
	// A queue constant at 100 bytes replays as exactly 100 in every frame,
	// whether frames are finer than its points (a point boundary falls
	// inside no frame twice) or coarser (several points share a frame).
	for _, c := range []struct {
		name          string
		points        int
		finer, frames int // points of a finer series over the same time; frames wanted
	}{
		{"frames finer than points", 10, 40, 40},
		{"frames coarser than points", 3 * web.MaxReplayFrames, 0, web.MaxReplayFrames},
	} {
		rec, err := web.LoadRecording(constantQueueReport(t, c.points, c.finer))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(rec.Frames) != c.frames {
			t.Errorf("%s: %d frames, want %d", c.name, len(rec.Frames), c.frames)
		}
		for i, f := range rec.Frames {
			if q, ok := f.Queues["sw1:p1"]; !ok || q != 100 {
				t.Errorf("%s: frame %d queue %d (present %v), want exactly 100", c.name, i, q, ok)
				break
			}
		}
	}
}

// constantQueueReport writes a report directory whose only queue series,
// sw1 port 0, holds 100 bytes in each of its points (1 µs apart); finer
// adds a pause series of that many points over the same time, which makes
// the frames finer.
func constantQueueReport(t *testing.T, points, finer int) string {
	t.Helper()
	type point struct {
		T   float64 `json:"time_s"`
		V   float64 `json:"value"`
		Max float64 `json:"max"`
	}
	type series struct {
		Series string            `json:"series"`
		Labels map[string]string `json:"labels"`
		Width  float64           `json:"point_width_s"`
		Points []point           `json:"points"`
	}
	const width = 1e-6
	q := series{Series: "switch_queue_depth_bytes", Labels: map[string]string{"node": "sw1", "port": "0", "tc": "3"}, Width: width}
	for i := range points {
		q.Points = append(q.Points, point{T: float64(i) * width, V: 100, Max: 100})
	}
	all := []series{q}
	if finer > 0 {
		w := float64(points) * width / float64(finer)
		p := series{Series: "switch_queue_paused", Labels: map[string]string{"node": "sw1", "port": "1", "tc": "3"}, Width: w}
		for i := range finer {
			p.Points = append(p.Points, point{T: float64(i) * w})
		}
		all = append(all, p)
	}
	dir := t.TempDir()
	write := func(name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(report.LayoutFile, report.Layout{Scenario: "constant", Layout: graph.Layout{Ports: map[string][]string{"sw1": {"p1", "p2"}}}})
	write("metrics.json", map[string]any{"scenario": "constant", "series": all})
	return dir
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
	// The incast's bottleneck (sw2 → r, three senders into one link) is
	// drawn red: its utilisation, from the ports' byte series, near 1.
	if !br.waitJS(t, `[...document.querySelectorAll("[data-util]")].some(e => Number(e.dataset.util) >= 0.9)`, 30*time.Second) {
		t.Error("no link drawn red (utilisation >= 0.9) during the replay of an incast")
	}
	br.screenshot(t, "replay.png") // docs/img/replay.png (ROCELAB_SCREENSHOT_DIR=docs/img)
	if !br.waitJS(t, `Number(document.body.dataset.frames) > 20`, 20*time.Second) {
		t.Error("frames did not advance")
	}
	if errs := br.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}

// TestReplayCraftedReports: a report whose numbers no run writes (a point
// width of 1e-30 s, negative or enormous times) is refused with the
// series and point named, or played on a coarsened grid; never a panic.
func TestReplayCraftedReports(t *testing.T) {
	good := constantQueueReport(t, 10, 0)
	lay, err := os.ReadFile(filepath.Join(good, report.LayoutFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, metrics, want string // want "" plays
	}{
		{"tiny width", `{"series":[{"series":"switch_queue_depth_bytes","labels":{"node":"sw1","port":"0"},"point_width_s":1e-30,"points":[{"time_s":0.001,"value":1,"max":1}]}]}`, ""},
		{"huge time", `{"series":[{"series":"switch_queue_depth_bytes","labels":{"node":"sw1","port":"0"},"point_width_s":1e-6,"points":[{"time_s":1e300,"value":1,"max":1}]}]}`, ""},
		{"negative width", `{"series":[{"series":"switch_queue_depth_bytes","labels":{"node":"sw1"},"point_width_s":-1,"points":[{"time_s":0,"value":1,"max":1}]}]}`, "series 0 (switch_queue_depth_bytes): point_width_s -1"},
		{"negative time", `{"series":[{"series":"switch_queue_depth_bytes","labels":{"node":"sw1"},"point_width_s":1e-6,"points":[{"time_s":0,"max":1},{"time_s":-5,"max":1}]}]}`, "point 1: t -5"},
		{"no series", `{"series":[]}`, "no time series"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, report.LayoutFile), lay, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "metrics.json"), []byte(c.metrics), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := Replay(dir, time.Second)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// FuzzReplay: a report directory's metrics.json of any bytes (beside a
// good layout) is replayed or refused, never a crash (issue 24 item 4: a
// crafted point width panicked the dashboard).
func FuzzReplay(f *testing.F) {
	f.Add(`{"series":[{"series":"switch_queue_depth_bytes","labels":{"node":"sw1","port":"0"},"point_width_s":1e-30,"points":[{"time_s":0.001,"value":1,"max":1}]}]}`)
	f.Add(`{"series":[{"series":"switch_port_tx_bytes_total","labels":{"node":"sw1","port":"0"},"point_width_s":1e-6,"points":[{"time_s":1e300,"value":1,"max":1}]}]}`)
	f.Add(`{"series":[]}`)
	var lay []byte
	f.Fuzz(func(t *testing.T, metrics string) {
		if lay == nil {
			good := constantQueueReport(t, 10, 0)
			b, err := os.ReadFile(filepath.Join(good, report.LayoutFile))
			if err != nil {
				t.Fatal(err)
			}
			lay = b
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, report.LayoutFile), lay, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "metrics.json"), []byte(metrics), 0o644); err != nil {
			t.Fatal(err)
		}
		Replay(dir, time.Second)
	})
}
