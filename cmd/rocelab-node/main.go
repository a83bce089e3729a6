// Command rocelab-node is the process behind one lab node, as `rocelab
// node` is, in a binary that links only what a node runs: it is ready in a
// few milliseconds where rocelab, which links every command's world
// (Docker's client, plotting, Prometheus, gopacket's layer tables), spends
// about 40 ms initialising packages. Deploy starts it when it stands
// beside the rocelab binary (make build and make install put it there);
// otherwise it starts `rocelab node`.
//
// Usage: rocelab-node --config FILE [--config FILE…] [--nice N]
// [--ready-fd FD]. Several
// configurations run one node.Group: nodes whose models share one loop.
// Exit status 2 for a bad flag or configuration, 1 when the node fails, 0
// after SIGTERM or POST /shutdown.
//
// With ROCELAB_NODE_CPUPROFILE set to a directory, the process writes a
// CPU profile of its life there (NAME-PID.prof, NAME its first
// configuration's file name) when it ends: to see where a node's time
// goes under load (`go tool pprof -top bin/rocelab-node DIR/*.prof`).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/rocelab/rocelab/lab/emulation/node"
)

func main() { os.Exit(run()) }

// run is the process: it returns the exit status, after its deferred
// calls (the CPU profile's end among them) have run.
func run() int {
	fs := flag.NewFlagSet("rocelab-node", flag.ContinueOnError)
	var configs []string
	fs.Func("config", "node configuration (JSON, written by deploy); several run one group of nodes on one loop", func(s string) error {
		configs = append(configs, s)
		return nil
	})
	nice := fs.Int("nice", node.DefaultNice, "scheduling priority of the node's threads (0: leave it)")
	readyFD := fs.Int("ready-fd", 0, "write \"ready\" to this inherited descriptor (a pipe from the starter) once the node answers /health")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if len(configs) == 0 || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: rocelab-node --config FILE [--config FILE…] [--nice N] [--ready-fd FD]")
		return 2
	}
	if dir := os.Getenv("ROCELAB_NODE_CPUPROFILE"); dir != "" {
		stop, err := profileCPU(dir, configs[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, "rocelab-node:", err)
			return 1
		}
		defer stop()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	var ready func()
	var err error
	if *readyFD != 0 {
		ready, err = node.ReadyFD(*readyFD)
	}
	if err == nil {
		err = node.RunConfigs(ctx, configs, *nice, ready, log)
	}
	switch {
	case errors.Is(err, node.ErrConfig):
		fmt.Fprintln(os.Stderr, "rocelab-node:", err)
		return 2
	case err != nil:
		fmt.Fprintln(os.Stderr, "rocelab-node:", err)
		return 1
	}
	return 0
}

// profileCPU starts a CPU profile written to dir when the returned stop
// is called.
func profileCPU(dir, config string) (stop func(), err error) {
	name := strings.TrimSuffix(filepath.Base(config), filepath.Ext(config))
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.prof", name, os.Getpid())))
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
