package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/topologies"
)

// CallTimeout bounds every call to the API server: an API server that
// does not answer is an error, never a hang.
const CallTimeout = 10 * time.Second

// CRDWait is how long Deploy waits for the Lab resource to appear.
const CRDWait = 10 * time.Second

// DefaultNamespace is where Labs and the agents' Leases live unless told
// otherwise: the namespace the documented install makes for the agents,
// so that a Lab made there finds them (the controller deploys a Lab across
// the agents of its own namespace; "default" would find none).
const DefaultNamespace = "rocelab"

// UndoWait bounds how long an interrupted Deploy waits for the Lab it
// created to go (its finalizer: the parts made so far destroyed).
const UndoWait = time.Minute

// Resources of the API server this package uses.
var (
	LabsResource   = GroupVersion.WithResource("labs")
	LeasesResource = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
)

// Config loads the cluster's client configuration: kubeconfig if given,
// else $KUBECONFIG or ~/.kube/config, else the pod's own (in cluster).
func Config(kubeconfig string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil && kubeconfig == "" {
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

// Client reads and writes Labs and agent Leases.
type Client struct {
	dyn dynamic.Interface
}

// NewClient is a client of cfg's cluster.
func NewClient(cfg *rest.Config) (*Client, error) {
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return &Client{dyn: d}, nil
}

// toUnstructured and fromUnstructured convert through JSON: the types
// here carry their own JSON tags.
func toUnstructured(v any) (*unstructured.Unstructured, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	return u, u.UnmarshalJSON(b)
}

func fromUnstructured(u *unstructured.Unstructured, v any) error {
	b, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// GetLab reads the Lab ns/name.
func (c *Client) GetLab(ctx context.Context, ns, name string) (*Lab, error) {
	u, err := c.dyn.Resource(LabsResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var l Lab
	return &l, fromUnstructured(u, &l)
}

// CreateLab creates lab.
func (c *Client) CreateLab(ctx context.Context, lab *Lab) error {
	lab.TypeMeta = metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: "Lab"}
	u, err := toUnstructured(lab)
	if err != nil {
		return err
	}
	_, err = c.dyn.Resource(LabsResource).Namespace(lab.Namespace).Create(ctx, u, metav1.CreateOptions{})
	return err
}

// DeleteLab deletes the Lab ns/name (its controller then destroys it).
func (c *Client) DeleteLab(ctx context.Context, ns, name string) error {
	return c.dyn.Resource(LabsResource).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{})
}

// Deploy creates the Lab ns/name of topology t and waits until the
// controller reports it running (returning its record) or failed (the
// Lab is then deleted again, so nothing is left). progress, if set, sees
// each new status.
func (c *Client) Deploy(ctx context.Context, ns, name string, t *topologies.Topology, scale int, seed uint64, progress func(phase, msg string)) (*deploy.Lab, error) {
	if t.Text() == nil {
		return nil, errors.New("deploy on kubernetes: the topology has no file text")
	}
	lab := &Lab{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: LabSpec{Topology: string(t.Text()), Source: t.Source, Scale: scale, Seed: seed}}
	// The controller installs the Lab resource when it starts: give a
	// controller starting beside this deploy a few seconds.
	for wait := time.Now().Add(CRDWait); ; {
		err := c.CreateLab(ctx, lab)
		if err == nil {
			break
		}
		if apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("Lab %s/%s: %w", ns, name, deploy.ErrExists)
		}
		if apierrors.IsNotFound(err) && !noNamespace(err, ns) && time.Now().Before(wait) {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if apierrors.IsNotFound(err) && noNamespace(err, ns) {
			return nil, fmt.Errorf("create Lab %s/%s: the cluster has no namespace %s (the chart makes it, with the agents in it; --namespace names another): %w", ns, name, ns, err)
		}
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("create Lab %s/%s: the cluster has no Lab resource (labs.%s): is rocelab-controller running? %w", ns, name, Group, err)
		}
		return nil, fmt.Errorf("create Lab %s/%s: %w", ns, name, err)
	}
	l, err := c.await(ctx, ns, name, progress)
	if err != nil && ctx.Err() != nil {
		// Interrupted (Ctrl-C, a deadline): the Lab goes with the deploy
		// that made it, as a failed one does, parts and all.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), UndoWait)
		defer cancel()
		if derr := c.Destroy(dctx, ns, name); derr != nil {
			return nil, errors.Join(err, fmt.Errorf("the interrupted deploy's Lab is left behind (rocelab destroy --name %s --namespace %s removes it): %w", name, ns, derr))
		}
		return nil, fmt.Errorf("%w (the Lab it created is deleted again)", err)
	}
	return l, err
}

// await waits until the Lab ns/name runs (returning its record) or fails
// (deleting it again).
func (c *Client) await(ctx context.Context, ns, name string, progress func(phase, msg string)) (*deploy.Lab, error) {
	var seen string
	for {
		lab, err := c.GetLab(ctx, ns, name)
		if err != nil {
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
			derr := c.Destroy(dctx, ns, name)
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
func (c *Client) Destroy(ctx context.Context, ns, name string) error {
	if err := c.DeleteLab(ctx, ns, name); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete Lab %s/%s: %w", ns, name, err)
	}
	for {
		lab, err := c.GetLab(ctx, ns, name)
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

// noNamespace reports whether err, a NotFound, is about namespace ns
// rather than the Lab resource.
func noNamespace(err error, ns string) bool {
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		return false
	}
	d := se.Status().Details
	return d != nil && d.Kind == "namespaces" && d.Name == ns
}

// Labs lists the Labs of namespace ns.
func (c *Client) Labs(ctx context.Context, ns string) ([]Lab, error) {
	ul, err := c.dyn.Resource(LabsResource).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Labs in namespace %s: %w", ns, err)
	}
	out := make([]Lab, len(ul.Items))
	for i := range ul.Items {
		if err := fromUnstructured(&ul.Items[i], &out[i]); err != nil {
			return nil, fmt.Errorf("Lab %s/%s: %w", ns, ul.Items[i].GetName(), err)
		}
	}
	return out, nil
}

// Record returns the deployed lab's record of lab, a Lab the controller
// runs (made by rocelab deploy or by kubectl), for this machine's commands
// to reach its nodes through their agents (cluster.Adopt records it); an
// error says what the Lab is doing instead.
func Record(lab *Lab) (*deploy.Lab, error) {
	ref := lab.Namespace + "/" + lab.Name
	st := lab.Status
	if st.Phase != PhaseRunning && st.Phase != PhaseDegraded || len(st.Lab) == 0 {
		return nil, fmt.Errorf("Lab %s is %s (%s): nothing to attach yet", ref, or(st.Phase, "pending"), or(st.Message, "the controller has not deployed it"))
	}
	var dl deploy.Lab
	if err := json.Unmarshal(st.Lab, &dl); err != nil {
		return nil, fmt.Errorf("Lab %s: its record: %w", ref, err)
	}
	if dl.Name != lab.Name {
		return nil, fmt.Errorf("Lab %s: its record is of lab %q", ref, dl.Name)
	}
	dl.Kubernetes = ref
	return &dl, nil
}

func or(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
