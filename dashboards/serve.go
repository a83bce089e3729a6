package dashboards

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rocelab/rocelab/dashboards/labsource"
	"github.com/rocelab/rocelab/dashboards/metrics"
	"github.com/rocelab/rocelab/dashboards/web"
	"github.com/rocelab/rocelab/topologies/graph"
)

// LiveOptions configure Live.
type LiveOptions struct {
	Root, Name string        // the lab: run-directory root and name ("" for the only lab)
	Interval   time.Duration // between web-view frames (0: 250 ms)
	// Version is the serving binary's release, for rocelab_build_info
	// ("": the main module's version, else "dev").
	Version string
	Log     *slog.Logger
}

// Live returns the handler of `rocelab dashboard` for a deployed lab:
// /metrics (Prometheus: the lab's families and rocelab_build_info) and
// the live web view at /. close releases the
// lab's node connections.
func Live(ctx context.Context, o LiveOptions) (h http.Handler, name string, close func(), err error) {
	src, err := labsource.Open(ctx, o.Root, o.Name)
	if err != nil {
		return nil, "", nil, err
	}
	t, err := src.Topology(ctx)
	if err != nil {
		src.Close()
		return nil, "", nil, err
	}
	// The web view and /metrics read the lab through one source: a
	// scrape while the page is open takes the page's reading when it is
	// under one update old instead of reading every node again.
	interval := cmp.Or(o.Interval, web.DefaultInterval)
	shared := metrics.Shared(src, interval, metrics.ReadTimeout)
	reg := prometheus.NewPedanticRegistry()
	for _, c := range []prometheus.Collector{metrics.NewCollector(shared, o.Log), metrics.NewBuildInfoCollector(metrics.ReadBuildInfo(o.Version))} {
		if err := reg.Register(c); err != nil {
			src.Close()
			return nil, "", nil, fmt.Errorf("dashboard: %w", err)
		}
	}
	layout := graph.NewLayout(t, graph.Options{Full: len(t.Nodes) <= 64})
	s := web.New(web.Options{
		Title:   src.Name(),
		Layout:  layout,
		NewFeed: web.Share(func() web.Feed { return web.NewLiveFeed(shared, layout, interval) }),
		Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}),
		Log:     o.Log,
	})
	return s, src.Name(), src.Close, nil
}

// Replay returns the web view playing a scenario report (a run in either
// clock, `rocelab run --report DIR`).
func Replay(dir string, interval time.Duration) (http.Handler, string, error) {
	rec, err := web.LoadRecording(dir)
	if err != nil {
		return nil, "", err
	}
	s := web.New(web.Options{
		Title:   rec.Title,
		Layout:  rec.Layout,
		Replay:  rec.Info(),
		Chakra:  rec.Chakra,
		NewFeed: func() web.Feed { return rec.NewFeed(interval) },
	})
	return s, rec.Title, nil
}

// Serve serves h on ln until ctx ends, then shuts down within a second.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	srv.Shutdown(sctx) // event streams end when their request contexts do
	srv.Close()
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// IsLoopback reports whether a listen address binds only to loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
