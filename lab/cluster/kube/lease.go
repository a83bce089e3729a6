package kube

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
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
func (c *Client) Announce(ctx context.Context, ns, machine, addr string, log *slog.Logger) {
	tick := time.NewTicker(LeaseDuration / 3)
	defer tick.Stop()
	for {
		if err := c.renew(ctx, ns, machine, addr); err != nil && ctx.Err() == nil {
			log.Warn("agent lease", "err", err)
		}
		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			c.dyn.Resource(LeasesResource).Namespace(ns).Delete(dctx, leaseName(machine), metav1.DeleteOptions{})
			cancel()
			return
		case <-tick.C:
		}
	}
}

func (c *Client) renew(ctx context.Context, ns, machine, addr string) error {
	leases := c.dyn.Resource(LeasesResource).Namespace(ns)
	now := metav1.NewMicroTime(time.Now())
	secs := int32(LeaseDuration / time.Second)
	var l coordv1.Lease
	u, err := leases.Get(ctx, leaseName(machine), metav1.GetOptions{})
	create := apierrors.IsNotFound(err)
	switch {
	case create:
		l = coordv1.Lease{
			TypeMeta: metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: leaseName(machine),
				Labels: map[string]string{AgentLabel: AgentLabelValue}, Annotations: map[string]string{AgentAnnotation: addr}},
			Spec: coordv1.LeaseSpec{HolderIdentity: &machine, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now},
		}
	case err != nil:
		return fmt.Errorf("get lease: %w", err)
	default:
		if err := fromUnstructured(u, &l); err != nil {
			return err
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
	}
	// One write: the new lease is created, a held one renewed.
	nu, err := toUnstructured(&l)
	if err != nil {
		return err
	}
	verb := "renew"
	if create {
		verb = "create"
		_, err = leases.Create(ctx, nu, metav1.CreateOptions{})
	} else {
		_, err = leases.Update(ctx, nu, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("%s lease %s: %w", verb, l.Name, err)
	}
	return nil
}

// Agents returns the addresses of the agents in namespace ns whose lease
// is fresh, in machine order.
func (c *Client) Agents(ctx context.Context, ns string) ([]string, error) {
	sel := labels.SelectorFromSet(labels.Set{AgentLabel: AgentLabelValue}).String()
	list, err := c.dyn.Resource(LeasesResource).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list agent leases in %s: %w", ns, err)
	}
	type agent struct{ machine, addr string }
	var out []agent
	for i := range list.Items {
		var l coordv1.Lease
		if err := fromUnstructured(&list.Items[i], &l); err != nil {
			return nil, err
		}
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
	slices.SortFunc(out, func(a, b agent) int { return strings.Compare(a.machine, b.machine) })
	addrs := make([]string, len(out))
	for i, a := range out {
		addrs[i] = a.addr
	}
	return addrs, nil
}
