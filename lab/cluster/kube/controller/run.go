package controller

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/rocelab/rocelab/lab/cluster/kube"
)

// Options of a controller.
type Options struct {
	// Root is where the controller keeps the labs' records.
	Root string
	Log  *slog.Logger
	// InstallCRD creates or updates the Lab CRD when the controller
	// starts (a chart that ships the CRD may leave it off, and the
	// controller's RBAC without customresourcedefinitions).
	InstallCRD bool
	// LeaderElection makes the controller act on Labs only while it holds
	// the Lease LeaderElectionNamespace/LeaderElectionID, so that two
	// replicas (a rolling update) never act on a Lab at once.
	LeaderElection bool
	// LeaderElectionNamespace holds the Lease: "" is the pod's own
	// namespace in a cluster, else DefaultNamespace.
	LeaderElectionNamespace string
	// LeaderElectionID names the Lease ("": DefaultLeaderElectionID).
	LeaderElectionID string
	// LeaseDuration, RenewDeadline and RetryPeriod are the election's
	// timing (0: controller-runtime's 15 s, 10 s and 2 s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// HealthProbeAddr serves /healthz and /readyz ("" or "0": none).
	HealthProbeAddr string
}

// Defaults of the options.
const (
	DefaultLeaderElectionID = "rocelab-controller"
	DefaultNamespace        = "default"
	// EventSource is the reporting controller of the Labs' Events.
	EventSource = "rocelab.dev/controller"
)

// inClusterNamespace is where a pod finds its namespace.
const inClusterNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Run runs the controller on cfg's cluster until ctx ends: it installs
// the Lab CRD (o.InstallCRD), waits to lead (o.LeaderElection), and
// reconciles Labs.
func Run(ctx context.Context, cfg *rest.Config, o Options) error {
	log := o.Log
	ctrl.SetLogger(logr.FromSlogHandler(log.Handler()))
	mo := ctrl.Options{
		Scheme:                        Scheme(),
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        or(o.HealthProbeAddr, "0"),
		LeaderElection:                o.LeaderElection,
		LeaderElectionResourceLock:    "leases",
		LeaderElectionID:              or(o.LeaderElectionID, DefaultLeaderElectionID),
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true, // main exits when Run returns
	}
	if mo.LeaderElection && mo.LeaderElectionNamespace == "" {
		if _, err := os.Stat(inClusterNamespace); err != nil {
			mo.LeaderElectionNamespace = DefaultNamespace
		}
	}
	for _, d := range []struct {
		v   time.Duration
		dst **time.Duration
	}{{o.LeaseDuration, &mo.LeaseDuration}, {o.RenewDeadline, &mo.RenewDeadline}, {o.RetryPeriod, &mo.RetryPeriod}} {
		if d.v > 0 {
			*d.dst = ptr(d.v)
		}
	}
	mgr, err := ctrl.NewManager(cfg, mo)
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	if mo.HealthProbeBindAddress != "0" {
		if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
			return fmt.Errorf("controller: %w", err)
		}
		if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
			return fmt.Errorf("controller: %w", err)
		}
	}
	if o.InstallCRD {
		c, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme()})
		if err != nil {
			return fmt.Errorf("controller: %w", err)
		}
		if err := InstallCRD(ctx, c); err != nil {
			return fmt.Errorf("controller: %w", err)
		}
	}
	kc, err := kube.NewClient(cfg)
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	r := &Reconciler{Client: mgr.GetClient(), Kube: kc, Events: mgr.GetEventRecorder(EventSource), Root: o.Root, Log: log}
	// Its own status writes do not wake a Lab's reconcile: only a new
	// spec, a deletion (which bumps the generation) or a new Lab do.
	err = ctrl.NewControllerManagedBy(mgr).
		For(&kube.Lab{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("lab").Complete(r)
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	if mo.LeaderElection {
		lease := mo.LeaderElectionNamespace + "/" + mo.LeaderElectionID
		log.Info("controller waiting to lead", "lease", lease, "root", o.Root)
		go func() {
			select {
			case <-mgr.Elected():
				log.Info("controller leading", "lease", lease)
			case <-ctx.Done():
			}
		}()
	} else {
		log.Info("controller running", "root", o.Root)
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	return nil
}
