package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rocelab/rocelab/lab/emulation/deploy"
	"github.com/rocelab/rocelab/topologies"
)

// CallTimeout bounds every call to the API server: an API server that
// does not answer is an error, never a hang.
const CallTimeout = 10 * time.Second

// Config loads the cluster's client configuration: kubeconfig if given,
// else $KUBECONFIG or ~/.kube/config, else the pod's own (in cluster).
func Config(kubeconfig string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		if ic, ierr := rest.InClusterConfig(); ierr == nil {
			cfg, err = ic, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes client config: %w", err)
	}
	cfg.Timeout = CallTimeout
	return cfg, nil
}

// NewClient is a client of cfg's cluster that knows Lab.
func NewClient(cfg *rest.Config) (client.Client, error) {
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return c, nil
}

// Deploy creates the Lab ns/name of topology t and waits until the
// controller reports it running (returning its record) or failed (the
// Lab is then deleted again, so nothing is left). progress, if set, sees
// each new status message.
func Deploy(ctx context.Context, c client.Client, ns, name string, t *topologies.Topology, scale int, seed uint64, progress func(phase, msg string)) (*deploy.Lab, error) {
	if t.Text() == nil {
		return nil, errors.New("deploy on kubernetes: the topology has no file text")
	}
	lab := &Lab{
		TypeMeta:   metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: "Lab"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       LabSpec{Topology: string(t.Text()), Source: t.Source, Scale: scale, Seed: seed},
	}
	if err := c.Create(ctx, lab); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("Lab %s/%s: %w", ns, name, deploy.ErrExists)
		}
		return nil, fmt.Errorf("create Lab %s/%s: %w", ns, name, err)
	}
	var seen string
	for {
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, lab); err != nil {
			return nil, fmt.Errorf("Lab %s/%s: %w", ns, name, err)
		}
		st := lab.Status
		if progress != nil && st.Phase+st.Message != seen {
			seen = st.Phase + st.Message
			progress(st.Phase, st.Message)
		}
		switch {
		case st.Phase == PhaseRunning && st.ObservedGeneration == lab.Generation:
			var dl deploy.Lab
			if err := json.Unmarshal(st.Lab, &dl); err != nil {
				return nil, fmt.Errorf("Lab %s/%s: its record: %w", ns, name, err)
			}
			return &dl, nil
		case st.Phase == PhaseFailed:
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			derr := Destroy(dctx, c, ns, name)
			return nil, errors.Join(fmt.Errorf("Lab %s/%s failed: %s", ns, name, st.Message), derr)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("Lab %s/%s is %s (%s): %w", ns, name, or(st.Phase, "pending"), st.Message, context.Cause(ctx))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Destroy deletes the Lab ns/name and waits until the controller has
// destroyed its parts and the Lab is gone. A Lab that does not exist is
// not an error.
func Destroy(ctx context.Context, c client.Client, ns, name string) error {
	lab := &Lab{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := c.Delete(ctx, lab); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete Lab %s/%s: %w", ns, name, err)
	}
	for {
		err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, lab)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("Lab %s/%s: %w", ns, name, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("Lab %s/%s still there (%s): %w", ns, name, lab.Status.Message, context.Cause(ctx))
		case <-time.After(200 * time.Millisecond):
		}
	}
}
