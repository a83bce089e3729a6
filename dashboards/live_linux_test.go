package dashboards

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/jobs"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/dashboards/grafana"
	"github.com/rocelab/rocelab/faults"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/topologies"
)

// TestLiveDashboard deploys the laptop lab, serves `rocelab dashboard`
// over it, and checks it the way its users meet it:
//   - /metrics passes promtool check metrics;
//   - a real Prometheus scrapes it, and every query of every generated
//     Grafana panel runs (parsed by Prometheus's own parser) and, during an
//     incast, returns data where the incast must produce it — PFC paused
//     time above zero on the receiver's rack switch among them;
//   - headless Chromium loads the web view without console errors, draws
//     one element per node, and shows the PFC pause on a link into the
//     receiver's rack switch within 2 s of wall clock of the incast's
//     traffic appearing; it writes a screenshot.
func TestLiveDashboard(t *testing.T) {
	testenv.RequireRoot(t)
	promBin := testenv.RequireTool(t, "prometheus")
	promtool := testenv.RequireTool(t, "promtool")
	chromium := testenv.RequireTool(t, "chromium")
	testenv.Exclusive(t)
	bin := testenv.BuildRocelab(t)
	root := testenv.RunRoot(t, "rltest-dash-")
	name := fmt.Sprintf("db%d", os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	topo, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	lab, err := deploy.Deploy(ctx, deploy.Options{Topology: topo, LabName: name, Root: root, Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := deploy.Destroy(context.Background(), root, name); err != nil {
			t.Errorf("destroy: %v", err)
		}
	})

	h, _, closeLab, err := Live(ctx, LiveOptions{Root: root, Name: name, Interval: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer closeLab()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stopServe := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- Serve(sctx, ln, h) }()
	defer func() {
		stopServe()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	base := "http://" + ln.Addr().String()

	// 1. The exposition passes promtool's lint.
	checkPromtool(t, promtool, base+"/metrics")

	// 2. Prometheus scrapes the lab; the browser watches it.
	prom := startPrometheus(t, promBin, ln.Addr().String())
	br := newBrowser(t, chromium)
	if _, err := chromedpNavigate(br, base+"/"); err != nil {
		t.Fatal(err)
	}
	want := len(topo.Nodes)
	if !br.waitJS(t, fmt.Sprintf(`document.querySelectorAll("#boxes [data-node]").length === %d && Number(document.body.dataset.frames || 0) >= 2`, want), 20*time.Second) {
		t.Fatalf("the page did not draw %d nodes and two frames in 20 s", want)
	}

	// A live fault shows in the page and in Prometheus.
	for _, n := range lab.Nodes {
		if n.Name == "rtsw1" {
			c := nodeapi.NewClient(n.Socket)
			spec, err := faults.ParseSpec("delay 1us")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.AddFault(ctx, "all", spec); err != nil {
				t.Fatalf("add fault: %v", err)
			}
			c.Close()
		}
	}
	if !br.waitJS(t, `Array.from(document.querySelectorAll("#faults li")).some(li => /rtsw1\/f1: delay 1us on rtsw1:p1/.test(li.textContent))`, 10*time.Second) {
		t.Error("the page does not list the fault on rtsw1")
	}

	// 3. An incast: three NICs on three hosts write into host4:gpu1.
	// Long enough in wall clock (about 20 s, whatever k auto picked) for the
	// checks below to see it running, retries included.
	d := max(clock.Millisecond, clock.Duration(20*int64(clock.Second)/int64(lab.Scale)))
	incastDone := startIncast(t, ctx, lab, []string{"host1:gpu0", "host2:gpu0", "host3:gpu0"}, "host4:gpu1", d)
	if !br.waitJS(t, `!!(window.rocelab && window.rocelab.lastFrame.links.some(l => l.util_ab > 0 || l.util_ba > 0))`, 60*time.Second) {
		t.Fatal("no traffic on any link in the web view within 60 s of starting the incast")
	}
	trafficSeen := time.Now()
	pfcOn := `Array.from(document.querySelectorAll("circle.pfc.on")).some(c => /->rtsw2:/.test(c.dataset.dir))`
	if !br.waitJS(t, pfcOn, 10*time.Second) {
		t.Fatalf("no PFC indicator on a link into rtsw2 within 10 s of the incast's traffic")
	}
	if d := time.Since(trafficSeen); d > 2*time.Second {
		t.Errorf("PFC indicator on after %v of wall clock, want within 2 s", d)
	} else {
		t.Logf("PFC indicator on %v after the incast's traffic appeared", d.Round(time.Millisecond))
	}
	time.Sleep(3 * time.Second) // a few scrapes during the incast
	br.screenshot(t, "dashboard.png")

	// 4. Every panel's queries against the real Prometheus, mid-incast. A
	// scrape that misses its 1 s timeout on a busy machine marks every
	// series stale until the next one, so a query counts once it returned
	// data (and a panel that must show traffic, once it showed some) in
	// any of up to six rounds 1.5 s apart (the incast runs about 20 s); a
	// query Prometheus refuses fails at once.
	var empty []string
	hadData, hadTraffic := map[string]bool{}, map[string]bool{}
	for try := 1; ; try++ {
		empty = nil
		for _, d := range grafana.Dashboards() {
			for _, p := range d.Panels {
				panel := d.Title + " / " + p.Title
				var all []float64
				for _, q := range p.Exprs {
					expr := grafana.Substitute(q.Expr, name, "4s")
					if hadData[expr] && (!p.NonZero || hadTraffic[panel]) {
						continue
					}
					r := prom.query(t, expr)
					if r.Status != "success" {
						t.Errorf("%s: %s: %s (%s)", panel, expr, r.Error, r.ErrorType)
						continue
					}
					vals := r.values()
					hadData[expr] = hadData[expr] || len(vals) > 0
					if p.Incast && !hadData[expr] {
						empty = append(empty, fmt.Sprintf("%s: no data during the incast: %s", panel, expr))
					}
					all = append(all, vals...)
				}
				hadTraffic[panel] = hadTraffic[panel] || anyAbove(all, 0)
				if p.NonZero && !hadTraffic[panel] {
					empty = append(empty, fmt.Sprintf("%s: nothing above zero during the incast: %v", panel, all))
				}
			}
		}
		if len(empty) == 0 || try == 6 {
			break
		}
		t.Logf("try %d: %d panel queries without data yet (a missed scrape?), asking them again; targets: %s", try, len(empty), prom.targets(t))
		time.Sleep(1500 * time.Millisecond)
	}
	for _, e := range empty {
		t.Error(e)
	}
	if len(empty) > 0 {
		t.Logf("targets: %s", prom.targets(t))
	}
	if r := prom.query(t, grafana.Substitute(grafana.FaultAnnotation, name, "4s")); r.Status != "success" {
		t.Errorf("fault annotation: %s", r.Error)
	}
	// Over a range, which skips the staleness marks a missed scrape
	// leaves (an instant query would then find nothing).
	r := prom.query(t, fmt.Sprintf(`sum(max_over_time(rocelab_switch_pg_xoff_seconds_total{lab=%q,node="rtsw2"}[10s]))`, name))
	if v := r.values(); len(v) != 1 || v[0] <= 0 {
		t.Errorf("PFC paused time on rtsw2 (the receiver's rack switch) = %v, want > 0; targets: %s", v, prom.targets(t))
	}
	if errs := br.consoleErrors(); len(errs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(errs, "\n"))
	}
	if err := <-incastDone; err != nil {
		t.Errorf("incast: %v", err)
	}
}

func anyAbove(vals []float64, x float64) bool {
	for _, v := range vals {
		if v > x {
			return true
		}
	}
	return false
}

// checkPromtool runs `promtool check metrics` on the exposition at url: it
// must report nothing.
func checkPromtool(t *testing.T, promtool, url string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	for _, want := range []string{"rocelab_switch_pg_xoff_seconds_total", "rocelab_nic_cnp_rx_total", "rocelab_switch_queue_depth_bytes", "rocelab_emu_scale_factor", "rocelab_emu_dilation_factor"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(string(body))
	out, err := cmd.CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// startIncast runs a perf write from every sender to recv for d of fabric
// time, concurrently; the channel gives the first error, or nil.
func startIncast(t *testing.T, ctx context.Context, lab *deploy.Lab, senders []string, recv string, d clock.Duration) <-chan error {
	t.Helper()
	clients := map[string]*nodeapi.Client{}
	ref := func(nic string) jobs.NICRef {
		host, _, _ := strings.Cut(nic, ":")
		for _, n := range lab.Nodes {
			if n.Name == host {
				if clients[host] == nil {
					clients[host] = nodeapi.NewClient(n.Socket)
				}
				return jobs.NICRef{Node: host, NIC: nic, Client: clients[host]}
			}
		}
		t.Fatalf("no node %s in lab", host)
		return jobs.NICRef{}
	}
	to := ref(recv)
	var from []jobs.NICRef
	for _, s := range senders {
		from = append(from, ref(s))
	}
	done := make(chan error, 1)
	go func() {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var first error
		for _, f := range from {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := jobs.RunPerf(ctx, f, to, jobs.PerfSpec{Op: "write", Size: 64 << 10, Duration: d, QPs: 1}, nil)
				mu.Lock()
				if err != nil && first == nil {
					first = fmt.Errorf("%s → %s: %w", f.NIC, recv, err)
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		for _, c := range clients {
			c.Close()
		}
		done <- first
	}()
	return done
}
