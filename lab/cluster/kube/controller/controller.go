// Package controller is the Kubernetes controller of Lab resources
// (package kube): it deploys each Lab across the agents that announce
// themselves in its namespace, repairs it, and destroys it behind a
// finalizer when the Lab is deleted; it tells how each Lab is doing in
// its status (a phase, the Ready and Degraded conditions) and in Events.
// Replicas of it elect a leader with a Lease, so that only one acts on
// Labs (run.go). It runs in its own binary, rocelab-controller, so that
// controller-runtime stays out of rocelab.
package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/rocelab/rocelab/lab/cluster"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

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
	// Events, if set, records the Labs' Events.
	Events events.EventRecorder
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
	// The name first: a Lab whose name cannot be a lab's never gets a
	// finalizer (nothing of it is ever deployed), so that deleting it
	// needs nobody; one that got a finalizer from an older controller
	// loses it.
	if err := state.ValidName(lab.Name); err != nil {
		return ctrl.Result{}, r.refuse(ctx, &lab, err, log)
	}
	if !lab.DeletionTimestamp.IsZero() {
		return r.delete(ctx, &lab, log)
	}
	if controllerutil.AddFinalizer(&lab, kube.Finalizer) {
		if err := r.Client.Update(ctx, &lab); err != nil {
			return ctrl.Result{}, fmt.Errorf("finalizer of Lab %s: %w", req, err)
		}
	}
	if lab.Status.Phase != kube.PhasePending && lab.Status.ObservedGeneration != lab.Generation && lab.Status.Phase != kube.PhaseFailed {
		// The spec changed under a deployed lab: take it down, deploy anew.
		r.event(&lab, false, EventRedeploying, "Destroy", "the spec changed (generation %d): destroying the lab to deploy it anew", lab.Generation)
		if err := r.destroy(ctx, &lab); err != nil {
			return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
		}
		lab.Status = kube.LabStatus{Conditions: lab.Status.Conditions}
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

// refuse marks a Lab whose name cannot be a lab's as Failed (Ready False,
// InvalidName), with a Warning Event, and removes a finalizer it has: it
// can be deleted at once.
func (r *Reconciler) refuse(ctx context.Context, lab *kube.Lab, why error, log *slog.Logger) error {
	if controllerutil.RemoveFinalizer(lab, kube.Finalizer) {
		if err := r.Client.Update(ctx, lab); err != nil {
			return fmt.Errorf("finalizer of Lab %s/%s: %w", lab.Namespace, lab.Name, err)
		}
	}
	if !lab.DeletionTimestamp.IsZero() {
		return nil
	}
	msg := fmt.Sprintf("not deployed: %v (a Lab's name is its lab's); delete this Lab and make it again under a name that fits", why)
	if lab.Status.Phase == kube.PhaseFailed && lab.Status.ObservedGeneration == lab.Generation && lab.Status.Message == msg {
		return nil
	}
	log.Warn("refused", "err", why)
	r.event(lab, true, kube.ReasonInvalidName, "Deploy", "%s", msg)
	return r.writeStatus(ctx, lab, func(st *kube.LabStatus) {
		ready(st, lab.Generation, kube.PhaseFailed, msg, false, kube.ReasonInvalidName, "")
	})
}

// delete destroys a deleted Lab's parts and then lets it go.
func (r *Reconciler) delete(ctx context.Context, lab *kube.Lab, log *slog.Logger) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(lab, kube.Finalizer) {
		return ctrl.Result{}, nil
	}
	r.event(lab, false, EventDestroying, "Destroy", "destroying the lab's parts on every machine")
	if err := r.destroy(ctx, lab); err != nil {
		log.Warn("destroy", "err", err)
		r.event(lab, true, EventDestroyFailed, "Destroy", "destroy: %v (retrying)", err)
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}
	log.Info("destroyed")
	r.event(lab, false, EventDestroyed, "Destroy", "every part of the lab is gone")
	controllerutil.RemoveFinalizer(lab, kube.Finalizer)
	if err := r.Client.Update(ctx, lab); err != nil {
		return ctrl.Result{}, fmt.Errorf("finalizer of Lab %s/%s: %w", lab.Namespace, lab.Name, err)
	}
	return ctrl.Result{}, nil
}

// deploy deploys lab across its namespace's agents.
func (r *Reconciler) deploy(ctx context.Context, lab *kube.Lab, log *slog.Logger) (ctrl.Result, error) {
	agents, err := r.Kube.Agents(ctx, lab.Namespace)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("agents of namespace %s: %w", lab.Namespace, err)
	}
	if len(agents) == 0 {
		msg := fmt.Sprintf("no rocelab agent announced itself in namespace %s (is the agent DaemonSet running?)", lab.Namespace)
		if lab.Status.Message != msg {
			r.event(lab, true, kube.ReasonNoAgents, "Deploy", "%s", msg)
		}
		return ctrl.Result{RequeueAfter: 5 * time.Second}, r.writeStatus(ctx, lab, func(st *kube.LabStatus) {
			ready(st, lab.Generation, kube.PhasePending, msg, false, kube.ReasonNoAgents, "")
		})
	}
	t, err := topologies.Parse(or(lab.Spec.Source, lab.Name+".yaml"), []byte(lab.Spec.Topology))
	if err != nil {
		return r.fail(ctx, lab, kube.ReasonInvalidSpec, err)
	}
	// The write of Deploying is the deploy's claim: on a conflict (a
	// write in between) it is not made, and the Lab is looked at anew.
	msg := fmt.Sprintf("deploying across %d machines", len(agents))
	st := kube.LabStatus{Conditions: lab.Status.Conditions}
	ready(&st, lab.Generation, kube.PhaseDeploying, msg, false, kube.ReasonDeploying, "")
	lab.Status = st
	if err := r.Client.Status().Update(ctx, lab); err != nil {
		return ctrl.Result{}, fmt.Errorf("status of Lab %s/%s: %w", lab.Namespace, lab.Name, err)
	}
	log.Info("deploy", "agents", len(agents), "generation", lab.Generation)
	r.event(lab, false, kube.ReasonDeploying, "Deploy", "deploying %s across %d machines (generation %d)", or(lab.Spec.Source, "the topology"), len(agents), lab.Generation)
	start := time.Now()
	dl, err := cluster.Deploy(ctx, deploy.Options{Topology: t, LabName: lab.Name, Root: r.Root, Scale: lab.Spec.Scale, Seed: lab.Spec.Seed}, agents)
	if err != nil {
		if ctx.Err() != nil {
			// The controller stops (it lost or gave up the lead): the
			// deploy rolled back, and Deploying tells the next leader to
			// deploy again.
			return ctrl.Result{}, fmt.Errorf("deploy Lab %s/%s: %w", lab.Namespace, lab.Name, err)
		}
		return r.fail(ctx, lab, kube.ReasonDeployFailed, err)
	}
	took := time.Since(start).Round(time.Millisecond)
	log.Info("deployed", "in", took)
	r.event(lab, false, kube.ReasonDeployed, "Deploy", "%d nodes on %d machines deployed in %v", len(dl.Nodes), len(dl.Machines), took)
	return ctrl.Result{RequeueAfter: Recheck}, r.running(ctx, lab, dl, fmt.Sprintf("deployed in %v", took))
}

// running writes the status of lab deployed as dl.
func (r *Reconciler) running(ctx context.Context, lab *kube.Lab, dl *deploy.Lab, how string) error {
	dl.Kubernetes = lab.Namespace + "/" + lab.Name
	rec, err := json.Marshal(dl)
	if err != nil {
		return fmt.Errorf("record of Lab %s/%s: %w", lab.Namespace, lab.Name, err)
	}
	gen := lab.Generation
	msg := fmt.Sprintf("%d nodes on %d machines, k = %d, %s", len(dl.Nodes), len(dl.Machines), dl.Scale, how)
	return r.writeStatus(ctx, lab, func(st *kube.LabStatus) {
		ready(st, gen, kube.PhaseRunning, msg, true, kube.ReasonDeployed, "")
		st.Machines, st.Nodes, st.Deployed, st.Lab = len(dl.Machines), len(dl.Nodes), kube.Now(), rec
	})
}

// fail records err as the Lab's failure (a failed deploy has rolled
// back: nothing of it is left), with a Warning Event.
func (r *Reconciler) fail(ctx context.Context, lab *kube.Lab, reason string, err error) (ctrl.Result, error) {
	r.event(lab, true, reason, "Deploy", "%v", err)
	gen := lab.Generation
	return ctrl.Result{}, r.writeStatus(ctx, lab, func(st *kube.LabStatus) {
		ready(st, gen, kube.PhaseFailed, err.Error(), false, reason, "")
		st.Machines, st.Nodes, st.Deployed, st.Lab = 0, 0, nil, nil
	})
}

// record returns the lab's record under the controller's root, adopting
// it from the status when the root lost it (a restarted controller, or
// a new leader).
func (r *Reconciler) record(lab *kube.Lab) (*deploy.Lab, error) {
	if len(lab.Status.Lab) == 0 {
		return nil, nil
	}
	var dl deploy.Lab
	if err := json.Unmarshal(lab.Status.Lab, &dl); err != nil {
		return nil, fmt.Errorf("the Lab's status record: %w", err)
	}
	if err := cluster.Adopt(r.Root, &dl, []byte(lab.Spec.Topology)); err != nil {
		return nil, fmt.Errorf("adopt Lab %s/%s: %w", lab.Namespace, lab.Name, err)
	}
	return &dl, nil
}

// check looks at a running lab's nodes and has the agents restart dead
// ones: Degraded (NodesDown, or AgentLost when an agent does not answer)
// until every node answers again.
func (r *Reconciler) check(ctx context.Context, lab *kube.Lab, log *slog.Logger) (ctrl.Result, error) {
	if _, err := r.record(lab); err != nil {
		return ctrl.Result{}, err
	}
	st, err := deploy.OnlyLab(ctx, r.Root, lab.Name)
	if err != nil {
		return ctrl.Result{RequeueAfter: Recheck}, nil
	}
	var dead []string
	for _, n := range st.Nodes {
		if !n.Alive() {
			dead = append(dead, fmt.Sprintf("%s on %s (%s)", n.Name, or(n.Machine, "this machine"), n.Health))
		}
	}
	gen, was := lab.Generation, lab.Status.Phase
	if len(dead) == 0 {
		if was == kube.PhaseRunning {
			return ctrl.Result{RequeueAfter: Recheck}, nil
		}
		msg := fmt.Sprintf("%d nodes on %d machines, k = %d, repaired", len(st.Nodes), len(st.Machines), st.Scale)
		return ctrl.Result{RequeueAfter: Recheck}, r.writeStatus(ctx, lab, func(s *kube.LabStatus) {
			ready(s, gen, kube.PhaseRunning, msg, true, kube.ReasonDeployed, "")
		})
	}
	fixed, err := cluster.Repair(ctx, r.Root, lab.Name, deploy.RestartOptions{})
	log.Info("repair", "down", dead, "restarted", fixed, "err", err)
	reason, msg := kube.ReasonNodesDown, fmt.Sprintf("down: %s; restarted %v", strings.Join(dead, ", "), fixed)
	switch {
	case err != nil && agentLost(err):
		reason, msg = kube.ReasonAgentLost, fmt.Sprintf("down: %s; an agent does not answer: %v", strings.Join(dead, ", "), err)
		r.event(lab, true, reason, "Repair", "%s", msg)
	case err != nil:
		msg = fmt.Sprintf("down: %s; repair: %v", strings.Join(dead, ", "), err)
		r.event(lab, true, reason, "Repair", "%s", msg)
	default:
		r.event(lab, true, reason, "Repair", "down: %s", strings.Join(dead, ", "))
		r.event(lab, false, kube.ReasonRepaired, "Repair", "restarted %s", strings.Join(fixed, ", "))
	}
	if was == kube.PhaseDegraded && lab.Status.Message == msg {
		return ctrl.Result{RequeueAfter: Recheck}, nil
	}
	return ctrl.Result{RequeueAfter: Recheck}, r.writeStatus(ctx, lab, func(s *kube.LabStatus) {
		ready(s, gen, kube.PhaseDegraded, msg, false, reason, reason)
	})
}

// destroy removes the lab's parts from every machine.
func (r *Reconciler) destroy(ctx context.Context, lab *kube.Lab) error {
	if _, err := r.record(lab); err != nil {
		return err
	}
	_, err := cluster.Destroy(ctx, r.Root, lab.Name)
	if errors.Is(err, deploy.ErrNoLab) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("destroy Lab %s/%s: %w", lab.Namespace, lab.Name, err)
	}
	return nil
}

func or(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
