// Command rocelab-controller is the Kubernetes controller of rocelab's
// Lab resources (package lab/cluster/kube/controller): it installs the
// Lab CRD and deploys every Lab across the rocelab agents that announce
// themselves in its namespace, repairs it, and destroys it when the Lab is
// deleted. Replicas elect a leader with a Lease (--leader-elect), so that
// a rolling update, which runs two at once, is safe. It is a binary of
// its own so that controller-runtime stays out of rocelab. See
// docs/multi-machine.md.
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
	var o controller.Options
	fs.StringVar(&o.Root, "root", state.DefaultRoot, "run directory root for the labs' records")
	fs.BoolVar(&o.InstallCRD, "install-crd", true, "create or update the Lab CRD at start (needs RBAC on customresourcedefinitions)")
	fs.BoolVar(&o.LeaderElection, "leader-elect", true, "act on Labs only while holding the leader Lease (two replicas are then safe)")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-elect-namespace", "", "namespace of the leader Lease (default: the pod's, or "+controller.DefaultNamespace+" out of a cluster)")
	fs.StringVar(&o.LeaderElectionID, "leader-elect-id", controller.DefaultLeaderElectionID, "name of the leader Lease")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", 0, "how long a lost leader's Lease keeps others waiting (0: 15s)")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", 0, "how long the leader tries to renew before it gives up leading (0: 10s)")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", 0, "how often candidates try the Lease (0: 2s)")
	fs.StringVar(&o.HealthProbeAddr, "health-probe-addr", "", "address serving /healthz and /readyz (e.g. :8081; default none)")
	printCRD := fs.Bool("print-crd", false, "print the Lab CRD as YAML (deploy/helm/rocelab/crds/labs.yaml) and exit")
	verbose := fs.Bool("v", false, "debug logging")
	fs.Parse(os.Args[1:])
	if *printCRD {
		b, err := controller.CRDFile()
		if err == nil {
			_, err = os.Stdout.Write(b)
		}
		exit(err)
		return
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	o.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := kube.Config(*kubeconfig)
	if err == nil {
		err = controller.Run(ctx, cfg, o)
	}
	exit(err)
}

func exit(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "rocelab-controller:", err)
		os.Exit(1)
	}
}
