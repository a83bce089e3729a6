// Package controller is the Kubernetes controller of Lab resources
// (package kube): it deploys each Lab across the agents that announce
// themselves in its namespace, repairs it, and destroys it behind a
// finalizer when the Lab is deleted. It runs in its own binary,
// rocelab-controller, so that controller-runtime stays out of rocelab.
package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rocelab/rocelab/lab/cluster"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/rocelab/rocelab/lab/cluster/kube"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/topologies"
)

// Scheme knows the built-in kinds, the CRD kind and Lab.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	clientgoscheme.AddToScheme(s)
	apiextv1.AddToScheme(s)
	kube.AddToScheme(s)
	return s
}

// Recheck is how often the controller looks at a running lab's health.
const Recheck = 10 * time.Second

// Reconciler deploys Labs across the agents of their namespace, repairs
// them, and destroys them when they are deleted.
type Reconciler struct {
	Client client.Client
	// Kube lists the agents' leases.
	Kube *kube.Client
	// Root is where the controller keeps the labs' records (the run
	// directory of a lab that spans machines: its parts and agents); a
	// controller that lost it rebuilds it from the Lab's status.
	Root string
	Log  *slog.Logger
}

// Reconcile brings one Lab to what it says.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var lab kube.Lab
	if err := r.Client.Get(ctx, req.NamespacedName, &lab); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	log := r.Log.With("lab", req.String())
	if !lab.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(&lab, kube.Finalizer) {
			return ctrl.Result{}, nil
		}
		if err := r.destroy(ctx, &lab); err != nil {
			log.Warn("destroy", "err", err)
			return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
		}
		log.Info("destroyed")
		controllerutil.RemoveFinalizer(&lab, kube.Finalizer)
		return ctrl.Result{}, r.Client.Update(ctx, &lab)
	}
	if controllerutil.AddFinalizer(&lab, kube.Finalizer) {
		if err := r.Client.Update(ctx, &lab); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := state.ValidName(lab.Name); err != nil {
		return r.fail(ctx, &lab, fmt.Errorf("the Lab's name is the lab's: %w", err))
	}
	if lab.Status.Phase != kube.PhasePending && lab.Status.ObservedGeneration != lab.Generation && lab.Status.Phase != kube.PhaseFailed {
		// The spec changed under a deployed lab: take it down, deploy anew.
		if err := r.destroy(ctx, &lab); err != nil {
			return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
		}
		lab.Status = kube.LabStatus{}
	}
	switch lab.Status.Phase {
	case kube.PhasePending:
		return r.deploy(ctx, &lab, log)
	case kube.PhaseDeploying:
		// A deploy that ended without its status written (a conflict, a
		// restarted controller): its record says whether it finished.
		if dl, err := deploy.Deployed(r.Root, lab.Name); err == nil {
			return ctrl.Result{RequeueAfter: Recheck}, r.running(ctx, &lab, dl, "deployed")
		}
		if err := r.destroy(ctx, &lab); err != nil {
			return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
		}
		return r.deploy(ctx, &lab, log)
	case kube.PhaseFailed:
		if lab.Status.ObservedGeneration != lab.Generation {
			return r.deploy(ctx, &lab, log)
		}
		return ctrl.Result{}, nil
	}
	return r.check(ctx, &lab, log)
}

// deploy deploys lab across its namespace's agents.
func (r *Reconciler) deploy(ctx context.Context, lab *kube.Lab, log *slog.Logger) (ctrl.Result, error) {
	agents, err := r.Kube.Agents(ctx, lab.Namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(agents) == 0 {
		lab.Status.Phase, lab.Status.Message = kube.PhasePending, fmt.Sprintf("no rocelab agent announced itself in namespace %s (is the agent DaemonSet running?)", lab.Namespace)
		return ctrl.Result{RequeueAfter: 5 * time.Second}, r.Client.Status().Update(ctx, lab)
	}
	t, err := topologies.Parse(or(lab.Spec.Source, lab.Name+".yaml"), []byte(lab.Spec.Topology))
	if err != nil {
		return r.fail(ctx, lab, err)
	}
	lab.Status = kube.LabStatus{Phase: kube.PhaseDeploying, Message: fmt.Sprintf("deploying across %d machines", len(agents)), ObservedGeneration: lab.Generation}
	if err := r.Client.Status().Update(ctx, lab); err != nil {
		return ctrl.Result{}, err
	}
	log.Info("deploy", "agents", len(agents))
	start := time.Now()
	dl, err := cluster.Deploy(ctx, deploy.Options{Topology: t, LabName: lab.Name, Root: r.Root, Scale: lab.Spec.Scale, Seed: lab.Spec.Seed}, agents)
	if err != nil {
		return r.fail(ctx, lab, err)
	}
	log.Info("deployed", "in", time.Since(start).Round(time.Millisecond))
	return ctrl.Result{RequeueAfter: Recheck}, r.running(ctx, lab, dl, fmt.Sprintf("deployed in %v", time.Since(start).Round(time.Millisecond)))
}

// running writes the status of lab deployed as dl, retrying on conflicts
// with writes of the Lab in between (the status is the controller's
// alone).
func (r *Reconciler) running(ctx context.Context, lab *kube.Lab, dl *deploy.Lab, how string) error {
	dl.Kubernetes = lab.Namespace + "/" + lab.Name
	rec, err := json.Marshal(dl)
	if err != nil {
		return err
	}
	st := kube.LabStatus{Phase: kube.PhaseRunning, Message: fmt.Sprintf("%d nodes on %d machines, k = %d, %s", len(dl.Nodes), len(dl.Machines), dl.Scale, how),
		ObservedGeneration: lab.Generation, Deployed: kube.Now(), Lab: rec}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := r.Client.Get(ctx, client.ObjectKeyFromObject(lab), lab); err != nil {
			return err
		}
		lab.Status = st
		return r.Client.Status().Update(ctx, lab)
	})
}

// fail records err as the Lab's failure (a failed deploy has rolled
// back: nothing of it is left).
func (r *Reconciler) fail(ctx context.Context, lab *kube.Lab, err error) (ctrl.Result, error) {
	st := kube.LabStatus{Phase: kube.PhaseFailed, Message: err.Error(), ObservedGeneration: lab.Generation}
	return ctrl.Result{}, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := r.Client.Get(ctx, client.ObjectKeyFromObject(lab), lab); err != nil {
			return err
		}
		lab.Status = st
		return r.Client.Status().Update(ctx, lab)
	})
}

// record returns the lab's record under the controller's root, adopting
// it from the status when the root lost it (a restarted controller).
func (r *Reconciler) record(ctx context.Context, lab *kube.Lab) (*deploy.Lab, error) {
	if len(lab.Status.Lab) == 0 {
		return nil, nil
	}
	var dl deploy.Lab
	if err := json.Unmarshal(lab.Status.Lab, &dl); err != nil {
		return nil, fmt.Errorf("the Lab's status record: %w", err)
	}
	if err := cluster.Adopt(r.Root, &dl, []byte(lab.Spec.Topology)); err != nil {
		return nil, err
	}
	return &dl, nil
}

// check looks at a running lab's nodes; the agents restart dead ones.
func (r *Reconciler) check(ctx context.Context, lab *kube.Lab, log *slog.Logger) (ctrl.Result, error) {
	if _, err := r.record(ctx, lab); err != nil {
		return ctrl.Result{}, err
	}
	st, err := deploy.OnlyLab(ctx, r.Root, lab.Name)
	if err != nil {
		return ctrl.Result{RequeueAfter: Recheck}, nil
	}
	phase, msg := kube.PhaseRunning, lab.Status.Message
	if st.Status != "running" {
		fixed, err := cluster.Repair(ctx, r.Root, lab.Name, deploy.RestartOptions{})
		phase, msg = kube.PhaseDegraded, fmt.Sprintf("restarted %v", fixed)
		if err != nil {
			msg = fmt.Sprintf("repair: %v", err)
		}
		log.Info("repair", "restarted", fixed, "err", err)
	}
	if phase != lab.Status.Phase || msg != lab.Status.Message {
		lab.Status.Phase, lab.Status.Message = phase, msg
		if err := r.Client.Status().Update(ctx, lab); err != nil && !apierrors.IsConflict(err) {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: Recheck}, nil
}

// destroy removes the lab's parts from every machine.
func (r *Reconciler) destroy(ctx context.Context, lab *kube.Lab) error {
	if _, err := r.record(ctx, lab); err != nil {
		return err
	}
	_, err := cluster.Destroy(ctx, r.Root, lab.Name)
	if errors.Is(err, deploy.ErrNoLab) {
		return nil
	}
	return err
}

func or(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Run installs the Lab CRD and runs the controller on cfg's
// cluster until ctx ends, keeping lab records under root.
func Run(ctx context.Context, cfg *rest.Config, root string, log *slog.Logger) error {
	ctrl.SetLogger(logr.FromSlogHandler(log.Handler()))
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	if err := InstallCRD(ctx, c); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	kc, err := kube.NewClient(cfg)
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	r := &Reconciler{Client: mgr.GetClient(), Kube: kc, Root: root, Log: log}
	if err := ctrl.NewControllerManagedBy(mgr).For(&kube.Lab{}).Named("lab").Complete(r); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	log.Info("controller running", "root", root)
	return mgr.Start(ctx)
}
