package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/dashboards"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
)

func newDashboardCmd(opts *options) *cobra.Command {
	var name, root, listen, replay string
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "dashboard [--name LAB] [--listen 127.0.0.1:9464] [--replay DIR]",
		Short: "Serve Prometheus metrics and a live web view of a lab (or replay a report)",
		Long: `Dashboard serves, on one listener:
  /         the live web view: the topology with links coloured by utilisation,
            switch ports by queue depth, PFC pauses per link direction, QP and
            collective rates, active faults and a timeline (4 updates a second);
  /metrics  the lab's telemetry in the Prometheus exposition format, read from
            every node at each scrape, or the web view's reading when it is
            under 250 ms old (docs/metrics.md lists the metrics;
            dashboards/grafana has Grafana dashboards over them).
With --replay DIR it plays a scenario report instead (rocelab run [--sim]
--report DIR), with a time slider; no lab or root needed.

It is read-only and binds to loopback unless --listen says otherwise. Ctrl-C
stops it. Needs root for a live lab (the node sockets are root-only).

  rocelab dashboard                       # then open http://127.0.0.1:9464/
  rocelab dashboard --replay out/`,
		Example: `  rocelab dashboard
  rocelab dashboard --name laptop --listen 127.0.0.1:9464
  rocelab dashboard --replay out/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if interval < 50*time.Millisecond {
				return badInput(fmt.Errorf("--interval %v: want at least 50ms", interval))
			}
			if _, _, err := net.SplitHostPort(listen); err != nil {
				return badInput(fmt.Errorf("--listen %q: want HOST:PORT (%v)", listen, err))
			}
			ctx := cmdContext(cmd)
			handler, title, closeFn, err := dashboardHandler(cmd, opts, root, name, replay, interval)
			if err != nil {
				return err
			}
			defer closeFn()
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				// An address this machine does not have, a name that does
				// not resolve or a port out of range is the caller's (exit
				// 2); a port in use is the machine's state (exit 1).
				var dnsErr *net.DNSError
				var addrErr *net.AddrError
				if errors.Is(err, syscall.EADDRNOTAVAIL) || errors.As(err, &dnsErr) || errors.As(err, &addrErr) {
					return badInput(fmt.Errorf("dashboard: --listen %s: %w", listen, err))
				}
				return fmt.Errorf("dashboard: --listen %s: %w", listen, err)
			}
			if !dashboards.IsLoopback(listen) {
				fmt.Fprintf(opts.stderr, "warning: %s is reachable from other machines; the view and /metrics have no authentication\n", ln.Addr())
			}
			what := "metrics at /metrics"
			if replay != "" {
				what = "a replay: no /metrics"
			}
			fmt.Fprintf(opts.stdout, "dashboard of %s: http://%s/ (%s); Ctrl-C stops\n", title, ln.Addr(), what)
			return dashboards.Serve(ctx, ln, handler)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "lab name (default: the only deployed lab)")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:9464", "address to serve on (loopback unless you say otherwise)")
	cmd.Flags().StringVar(&replay, "replay", "", "play this report directory instead of a live lab")
	cmd.Flags().DurationVar(&interval, "interval", 250*time.Millisecond, "wall-clock time between web-view updates")
	limit(cmd.Flags(), "interval", 0.05, 3600)
	addRootFlag(cmd, &root)
	return cmd
}

// dashboardHandler builds the live view of a lab, or the replay of a
// report.
func dashboardHandler(cmd *cobra.Command, opts *options, root, name, replay string, interval time.Duration) (http.Handler, string, func(), error) {
	if replay != "" {
		if name != "" {
			return nil, "", nil, badInput(errors.New("--replay plays a report: it takes no --name"))
		}
		h, title, err := dashboards.Replay(replay, interval)
		if err != nil {
			return nil, "", nil, badInput(err)
		}
		return h, title, func() {}, nil
	}
	if err := requireRoot("dashboard"); err != nil {
		return nil, "", nil, err
	}
	h, title, closeFn, err := dashboards.Live(cmdContext(cmd), dashboards.LiveOptions{Root: root, Name: name, Interval: interval, Version: version, Log: opts.log})
	if errors.Is(err, deploy.ErrPickLab) {
		return nil, "", nil, badInput(err)
	}
	if err != nil {
		return nil, "", nil, err
	}
	return h, title, closeFn, nil
}
