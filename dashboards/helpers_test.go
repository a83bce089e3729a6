package dashboards

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// promServer is a real Prometheus started by a test, stopped by its
// cleanup.
type promServer struct {
	addr string
}

// startPrometheus runs Debian's prometheus on a free loopback port,
// scraping target (HOST:PORT, /metrics) every 500 ms, or with no scrape
// job when target is "".
func startPrometheus(t *testing.T, bin, target string) *promServer {
	t.Helper()
	dir := t.TempDir()
	cfg := "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
	if target != "" {
		cfg += fmt.Sprintf("scrape_configs:\n  - job_name: rocelab\n    scrape_interval: 1s\n    scrape_timeout: 1s\n    static_configs:\n      - targets: [%q]\n", target)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr,
		"--log.level=warn")
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prometheus: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Logf("prometheus log:\n%s", b)
		}
	})
	p := &promServer{addr: addr}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus on %s not ready after 30 s", addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if target == "" {
		return p
	}
	// Prometheus hands discovered targets to its scrapers every 5 s: wait
	// for the first good scrape.
	for start := time.Now(); ; {
		if strings.Contains(p.targets(t), `"health":"up"`) {
			t.Logf("prometheus scraping %s after %v", target, time.Since(start).Round(time.Millisecond))
			return p
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("prometheus did not scrape %s within 30 s: %s", target, p.targets(t))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// targets returns the scrape targets' health and last errors.
func (p *promServer) targets(t *testing.T) string {
	resp, err := http.Get("http://" + p.addr + "/api/v1/targets")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// promResult is the part of an instant query's answer the tests read.
type promResult struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	} `json:"data"`
}

// query runs an instant query; a PromQL syntax error comes back in the
// result (status "error", errorType "bad_data"), from Prometheus's own
// parser.
func (p *promServer) query(t *testing.T, expr string) promResult {
	t.Helper()
	resp, err := http.Get("http://" + p.addr + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		t.Fatalf("query %s: %v", expr, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r promResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("query %s: %v: %s", expr, err, b)
	}
	return r
}

// values returns the result's sample values.
func (r promResult) values() []float64 {
	var out []float64
	for _, s := range r.Data.Result {
		var v float64
		if str, ok := s.Value[1].(string); ok {
			fmt.Sscanf(str, "%g", &v)
		}
		out = append(out, v)
	}
	return out
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// browser is a headless Chromium driven with chromedp, collecting console
// errors and uncaught exceptions.
type browser struct {
	ctx    context.Context
	errors chan string
}

func newBrowser(t *testing.T, bin string) *browser {
	t.Helper()
	// Chromium on a loaded machine now and then exits before it opens
	// its DevTools port ("chrome failed to start"); that is the
	// browser's start, not what a test checks, so it gets three tries.
	var err error
	for try := 1; try <= 3; try++ {
		var b *browser
		if b, err = startBrowser(t, bin); err == nil {
			return b
		}
		t.Logf("start chromium, try %d: %v", try, err)
	}
	t.Fatalf("start chromium: %v", err)
	return nil
}

// startBrowser starts one headless Chromium; it is stopped at the end of
// the test, or at once if it fails to start.
func startBrowser(t *testing.T, bin string) (*browser, error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{errors: make(chan string, 64)}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == "error" {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value))
				}
				b.report("console.error: " + strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			b.report(fmt.Sprintf("exception: %s (line %d)", ev.ExceptionDetails.Text, ev.ExceptionDetails.LineNumber))
		}
	}))
	b.ctx = ctx
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelA()
		return nil, err
	}
	t.Cleanup(func() { cancel(); cancelA() })
	return b, nil
}

func (b *browser) report(s string) {
	select {
	case b.errors <- s:
	default:
	}
}

// consoleErrors returns what the page complained about so far.
func (b *browser) consoleErrors() []string {
	var out []string
	for {
		select {
		case s := <-b.errors:
			out = append(out, s)
		default:
			return out
		}
	}
}

// waitJS polls a JavaScript expression until it is true or timeout passes.
func (b *browser) waitJS(t *testing.T, expr string, timeout time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		if ok {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// screenshot writes a PNG of the page to ROCELAB_SCREENSHOT_DIR/name, or
// to the test's temporary directory.
func (b *browser) screenshot(t *testing.T, name string) string {
	t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := os.Getenv("ROCELAB_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

func chromedpNavigate(b *browser, url string) (struct{}, error) {
	return struct{}{}, chromedp.Do(b.ctx, chromedp.Navigate(url))
}
