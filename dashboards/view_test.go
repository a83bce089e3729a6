package dashboards

import (
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rocelab/rocelab/internal/testenv"
)

// Thresholds of TestViewGeometry, in screen pixels unless said.
const (
	minVisiblePx   = 20 // of every link, outside every node box
	minParallelPx  = 8  // between parallel links, at ¼, ½ and ¾ of their length
	maxFromPort    = 2  // a queue marker's edge from its port's half of its link, in the drawing's units
	timelineEvents = 15 // numbers ≥ 10 appear
)

// TestViewGeometry loads the live view of the laptop lab (made-up traffic
// on every link and port) and the replay of example 01 (HOL blocking), and
// checks the drawing as its users read it (issue 51): parallel links — a
// host's two GPU NICs, double uplinks — apart; every link visible outside
// the boxes; queue markers beside their ports, outside the boxes; the
// timeline's numbers whole and its list scrolled to the newest event; and
// a cramped made-up layout (boxes touching and overlapping) whose links
// must still show. It
// writes screenshots view-laptop.png and view-hol.png
// (ROCELAB_SCREENSHOT_DIR=/tmp keeps them).
func TestViewGeometry(t *testing.T) {
	chromium := testenv.RequireTool(t, "chromium")
	for _, c := range []struct {
		name     string
		view     func(t *testing.T) http.Handler
		parallel int    // node pairs joined by more than one link, at least
		ready    string // JavaScript: the moment to measure
	}{
		{"laptop", laptopView, 8, `document.querySelectorAll("#timeline li").length >= 15`},
		{"hol", func(t *testing.T) http.Handler {
			h, _, err := Replay(simReport(t), 20*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			return h
		}, 0, `document.querySelectorAll("circle.pfc.on").length > 0 && document.querySelectorAll("circle.qdot[r]:not([r='0'])").length > 0`},
		{"cramped", crampedView, 0, `Number(document.body.dataset.frames) >= 2`},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := serveView(t, c.view(t))
			br := newBrowser(t, chromium)
			if _, err := chromedpNavigate(br, url); err != nil {
				t.Fatal(err)
			}
			if !br.waitJS(t, c.ready, 60*time.Second) {
				t.Fatalf("the view never reached the moment to measure (%s)", c.ready)
			}
			br.screenshot(t, "view-"+c.name+".png")
			m, err := chromedp.Run(br.ctx, chromedp.Evaluate[measured](measureJS))
			if err != nil {
				t.Fatal(err)
			}
			checkLinks(t, m, c.parallel)
			checkQueues(t, m)
			checkTimeline(t, m)
			if len(m.Numbers) >= timelineEvents {
				checkTimelineScrollsBack(t, br)
			}
			if errs := br.consoleErrors(); len(errs) > 0 {
				t.Errorf("console errors: %v", errs)
			}
		})
	}
}

// checkLinks: every link shows outside the boxes; parallel links are
// apart along their length.
func checkLinks(t *testing.T, m measured, parallel int) {
	t.Helper()
	if len(m.Links) == 0 {
		t.Fatal("no links drawn")
	}
	byPair := map[string][]int{}
	for i, l := range m.Links {
		byPair[l.Pair] = append(byPair[l.Pair], i)
		if l.Visible <= minVisiblePx {
			t.Errorf("link %s ↔ %s: %.1f px outside the boxes, want > %d", l.A, l.B, l.Visible, minVisiblePx)
		}
	}
	groups, closest := 0, math.Inf(1)
	for pair, idx := range byPair {
		if len(idx) < 2 {
			continue
		}
		groups++
		for x := 0; x < len(idx); x++ {
			for y := x + 1; y < len(idx); y++ {
				p, q := m.Links[idx[x]], m.Links[idx[y]]
				gap := math.Inf(1)
				for k := range p.Points {
					gap = min(gap, math.Hypot(p.Points[k][0]-q.Points[k][0], p.Points[k][1]-q.Points[k][1]))
				}
				closest = min(closest, gap)
				if gap < minParallelPx {
					t.Errorf("%s: links %s ↔ %s and %s ↔ %s are %.1f px apart, want ≥ %d", pair, p.A, p.B, q.A, q.B, gap, minParallelPx)
				}
			}
		}
	}
	t.Logf("%d node pairs with parallel links, the closest %.1f px apart", groups, closest)
	if groups < parallel {
		t.Errorf("%d node pairs with parallel links, want ≥ %d", groups, parallel)
	}
}

// checkQueues: every lit queue marker lies outside every box, on its
// link near its port.
func checkQueues(t *testing.T, m measured) {
	t.Helper()
	if len(m.Queues) == 0 {
		t.Fatal("no queue marker lit")
	}
	for _, q := range m.Queues {
		if q.IntoBox > 0.5 {
			t.Errorf("queue marker of %s (radius %.1f px) reaches %.1f px into a box", q.Port, q.R, q.IntoBox)
		}
		if q.FromEnd > maxFromPort {
			t.Errorf("queue marker of %s: %.1f units from its port's half of its link, want ≤ %d", q.Port, q.FromEnd, maxFromPort)
		}
	}
}

// checkTimeline: every event number lies whole inside the list; a list
// longer than its box scrolls, showing the newest event.
func checkTimeline(t *testing.T, m measured) {
	t.Helper()
	for _, n := range m.Numbers {
		switch {
		case n.Missing:
			t.Errorf("timeline item %q: its number is a list marker outside the list's box", n.Text)
			return
		case n.Left < -0.5 || n.Right < -0.5 || n.Clipped:
			t.Errorf("timeline number %s clipped (%.1f px from the left edge, %.1f from the right, clipped %v)", n.Text, n.Left, n.Right, n.Clipped)
		}
	}
	tl := m.Timeline
	if len(m.Numbers) >= timelineEvents && tl.Scroll > tl.Client {
		if tl.Overflow != "auto" && tl.Overflow != "scroll" {
			t.Errorf("timeline overflow-y %q: a long list does not scroll", tl.Overflow)
		}
		if tl.LastBelow > 1 {
			t.Errorf("the newest event is %.0f px below the timeline's view: the list does not follow it", tl.LastBelow)
		}
	}
}

// TestReplaySpeedControl: the replay's speed control changes the fabric
// time played per wall second, measured in the page: ten times the speed
// plays at least three times as fast (not gated on the machine's speed:
// a slow machine slows both), and never faster than asked; the default
// plays 1 ms of fabric time in about 10 s.
func TestReplaySpeedControl(t *testing.T) {
	chromium := testenv.RequireTool(t, "chromium")
	h, _, err := Replay(simReport(t), 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	br := newBrowser(t, chromium)
	if _, err := chromedpNavigate(br, serveView(t, h)); err != nil {
		t.Fatal(err)
	}
	if !br.waitJS(t, `!!window.rocelab && document.getElementById("speed").options.length > 1`, 20*time.Second) {
		t.Fatal("no speed control")
	}
	def, err := chromedp.Run(br.ctx, chromedp.Evaluate[float64](`Number(document.getElementById("speed").value)`))
	if err != nil {
		t.Fatal(err)
	}
	if def != 100e-6 {
		t.Errorf("default speed %g fabric s per s, want 100 µs/s (1 ms in 10 s)", def)
	}
	rate := func(speed float64) float64 {
		js := fmt.Sprintf(`(async () => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const sel = document.getElementById("speed");
  const o = [...sel.options].find((o) => Number(o.value) === %g);
  if (!o) return -1;
  sel.value = o.value; sel.dispatchEvent(new Event("change"));
  await sleep(500);
  const f0 = window.rocelab.lastFrame.fabric_time_s, t0 = performance.now();
  await sleep(2000);
  return (window.rocelab.lastFrame.fabric_time_s - f0) / ((performance.now() - t0) / 1000);
})()`, speed)
		r, err := chromedp.Run(br.ctx, chromedp.Evaluate[float64](js, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("asked %g fabric s per s, played %g", speed, r)
		if r > 2*speed {
			t.Errorf("asked %g fabric s per s, played %g", speed, r)
		}
		return r
	}
	slow, fast := rate(10e-6), rate(100e-6)
	if fast < 3*slow || slow <= 0 {
		t.Errorf("10× the speed played %g fabric s per s against %g: want ≥ 3×", fast, slow)
	}
}

// checkTimelineScrollsBack: a reader who scrolled the timeline up to
// older events stays there as new ones arrive.
func checkTimelineScrollsBack(t *testing.T, br *browser) {
	t.Helper()
	top, err := chromedp.Run(br.ctx, chromedp.Evaluate[float64](`(async () => {
  const ol = document.getElementById("timeline"), n = ol.lastElementChild.textContent;
  ol.scrollTop = 0;
  for (let i = 0; i < 100 && ol.lastElementChild.textContent === n; i++) await new Promise((r) => setTimeout(r, 50));
  return ol.lastElementChild.textContent === n ? -1 : ol.scrollTop;
})()`, chromedp.EvalAwaitPromise))
	switch {
	case err != nil:
		t.Fatal(err)
	case top < 0:
		t.Error("no new event within 5 s")
	case top > 0:
		t.Errorf("a new event scrolled the timeline to %g px while the reader was at the top", top)
	}
}
