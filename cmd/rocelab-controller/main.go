// Command rocelab-controller is the Kubernetes controller of rocelab's
// Lab resources (package lab/cluster/kube/controller): it installs the
// Lab CRD and deploys every Lab across the rocelab agents that announce
// themselves in its namespace, repairs it, and destroys it when the Lab is
// deleted. It is a binary of its own so that controller-runtime stays out
// of rocelab. See docs/multi-machine.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/rocelab/rocelab/lab/cluster/kube"
	"github.com/rocelab/rocelab/lab/cluster/kube/controller"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
)

func main() {
	// A flag set of its own: controller-runtime registers a -kubeconfig
	// of its own on the global one.
	fs := flag.NewFlagSet("rocelab-controller", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster (default $KUBECONFIG, ~/.kube/config, or in-cluster)")
	root := fs.String("root", state.DefaultRoot, "run directory root for the labs' records")
	verbose := fs.Bool("v", false, "debug logging")
	fs.Parse(os.Args[1:])
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := kube.Config(*kubeconfig)
	if err == nil {
		err = controller.Run(ctx, cfg, *root, log)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rocelab-controller:", err)
		os.Exit(1)
	}
}
