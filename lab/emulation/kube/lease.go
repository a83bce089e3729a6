package kube

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// An agent announces itself with a Lease of its own, renewed while it
// runs: the controller deploys across the agents whose lease is fresh.
const (
	// AgentLabel marks agents' leases; AgentAnnotation holds the agent's
	// API address (host:port).
	AgentLabel      = "app.kubernetes.io/name"
	AgentLabelValue = "rocelab-agent"
	AgentAnnotation = "rocelab.dev/agent"
	// LeaseDuration is how long a lease lasts unrenewed; agents renew it
	// every LeaseDuration/3.
	LeaseDuration = 30 * time.Second
)

// leaseName is machine's lease.
func leaseName(machine string) string { return "rocelab-agent-" + machine }

// Announce keeps the lease of the agent of machine, reachable at addr, in
// namespace ns, renewing it until ctx ends (then it deletes it: a stopped
// agent leaves at once rather than when its lease runs out). Errors are
// logged and retried: the API server may come and go.
func Announce(ctx context.Context, c client.Client, ns, machine, addr string, log *slog.Logger) {
	tick := time.NewTicker(LeaseDuration / 3)
	defer tick.Stop()
	for {
		if err := renew(ctx, c, ns, machine, addr); err != nil && ctx.Err() == nil {
			log.Warn("agent lease", "err", err)
		}
		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			c.Delete(dctx, &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: leaseName(machine)}})
			cancel()
			return
		case <-tick.C:
		}
	}
}

func renew(ctx context.Context, c client.Client, ns, machine, addr string) error {
	now := metav1.NewMicroTime(time.Now())
	secs := int32(LeaseDuration / time.Second)
	var l coordv1.Lease
	err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: leaseName(machine)}, &l)
	if apierrors.IsNotFound(err) {
		l = coordv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: leaseName(machine),
				Labels: map[string]string{AgentLabel: AgentLabelValue}, Annotations: map[string]string{AgentAnnotation: addr}},
			Spec: coordv1.LeaseSpec{HolderIdentity: &machine, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now},
		}
		if err := c.Create(ctx, &l); err != nil {
			return fmt.Errorf("create lease %s: %w", l.Name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get lease: %w", err)
	}
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Labels[AgentLabel] = AgentLabelValue
	l.Annotations[AgentAnnotation] = addr
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = &machine, &secs, &now
	if err := c.Update(ctx, &l); err != nil {
		return fmt.Errorf("renew lease %s: %w", l.Name, err)
	}
	return nil
}

// Agents returns the addresses of the agents in namespace ns whose lease
// is fresh, sorted by machine.
func Agents(ctx context.Context, c client.Reader, ns string) ([]string, error) {
	var ls coordv1.LeaseList
	if err := c.List(ctx, &ls, client.InNamespace(ns), client.MatchingLabels{AgentLabel: AgentLabelValue}); err != nil {
		return nil, fmt.Errorf("list agent leases in %s: %w", ns, err)
	}
	type agent struct{ machine, addr string }
	var out []agent
	for _, l := range ls.Items {
		addr := l.Annotations[AgentAnnotation]
		if addr == "" || l.Spec.RenewTime == nil || l.Spec.HolderIdentity == nil {
			continue
		}
		d := LeaseDuration
		if l.Spec.LeaseDurationSeconds != nil {
			d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
		}
		if time.Since(l.Spec.RenewTime.Time) > d {
			continue
		}
		out = append(out, agent{*l.Spec.HolderIdentity, addr})
	}
	slices.SortFunc(out, func(a, b agent) int {
		if a.machine < b.machine {
			return -1
		}
		if a.machine > b.machine {
			return 1
		}
		return 0
	})
	addrs := make([]string, len(out))
	for i, a := range out {
		addrs[i] = a.addr
	}
	return addrs, nil
}
