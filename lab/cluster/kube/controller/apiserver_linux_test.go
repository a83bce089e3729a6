package controller_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/cluster/agent/agenttest"
	"github.com/rocelab/rocelab/lab/cluster/kube"
	"github.com/rocelab/rocelab/lab/cluster/kube/controller"
)

// TestLabResourceOnAPIServer installs the Lab CRD on a real
// kube-apiserver and checks what users see of it: the API server refuses
// a Lab whose name is too long and a spec out of range; it serves the
// fields' descriptions (what kubectl explain lab.spec reads) and the
// printer columns (kubectl get). Then, with the name limit taken out of
// the CRD (as by an older one), rocelab-controller refuses a long-named
// Lab without a finalizer — Failed, Ready False InvalidName, a Warning
// Event — and takes off the finalizer an older controller put on one, so
// that deleting either needs nobody; a Lab with no agent to deploy it is
// Ready False NoAgents with an Event, and deleting it works too.
func TestLabResourceOnAPIServer(t *testing.T) {
	testenv.RequireRoot(t)
	agenttest.K8sBinaries(t)
	ctl := testenv.BuildCommand(t, "rocelab-controller")
	u := agenttest.New(t, 0)
	cp := u.StartControlPlane(t)
	cfg := restConfig(t, u, cp)
	c := newClient(t, cfg)
	ctx := t.Context()
	if err := controller.InstallCRD(ctx, c); err != nil {
		t.Fatal(err)
	}

	// Refused up front.
	lab := func(name string, spec kube.LabSpec) *kube.Lab {
		return &kube.Lab{ObjectMeta: metav1.ObjectMeta{Namespace: labNS, Name: name}, Spec: spec}
	}
	long := strings.Repeat("l", kube.MaxNameLength+1)
	for _, bad := range []struct {
		lab  *kube.Lab
		want string
	}{
		{lab(long, kube.LabSpec{Topology: tiny}), "metadata.name"},
		{lab("neg", kube.LabSpec{Topology: tiny, Scale: -1}), "spec.scale"},
		{lab("huge", kube.LabSpec{Topology: tiny, Scale: controller.MaxScale + 1}), "spec.scale"},
		{lab("empty", kube.LabSpec{}), "spec.topology"},
	} {
		err := c.Create(ctx, bad.lab)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("create Lab %.12s… %+v: %v, want Invalid naming %s", bad.lab.Name, bad.lab.Spec.Scale, err, bad.want)
		} else {
			t.Logf("refused: %v", err)
		}
	}
	ok := lab(strings.Repeat("k", kube.MaxNameLength), kube.LabSpec{Topology: tiny})
	if err := c.Create(ctx, ok); err != nil {
		t.Errorf("a Lab named with %d characters: %v", kube.MaxNameLength, err)
	}

	explained(t, cfg, c)
	columns(t, cfg)

	// The CRD without its name limit: the controller refuses the name.
	var crd apiextv1.CustomResourceDefinition
	if err := c.Get(ctx, client.ObjectKey{Name: "labs." + kube.Group}, &crd); err != nil {
		t.Fatal(err)
	}
	delete(crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties, "metadata")
	if err := c.Update(ctx, &crd); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "a long name accepted without the CRD's limit", func() (bool, string) {
		err := c.Create(ctx, lab(long, kube.LabSpec{Topology: tiny}))
		return err == nil, fmt.Sprint(err)
	})
	older := lab(strings.Repeat("o", kube.MaxNameLength+10), kube.LabSpec{Topology: tiny})
	older.Finalizers = []string{kube.Finalizer} // as an older controller left it
	if err := c.Create(ctx, older); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, lab("lonely", kube.LabSpec{Topology: tiny})); err != nil {
		t.Fatal(err)
	}
	startController(t, u, "ctl", ctl, "--kubeconfig", cp.Kubeconfig, "--root", u.Client.Root+"/ctl", "--install-crd=false")
	for _, name := range []string{long, older.Name} {
		waitFor(t, time.Minute, "long name refused", func() (bool, string) {
			l, err := getLab(t, c, labNS, name)
			if err != nil {
				return false, err.Error()
			}
			st, reason := condition(l, kube.ConditionReady)
			return l.Status.Phase == kube.PhaseFailed && st == metav1.ConditionFalse && reason == kube.ReasonInvalidName &&
				len(l.Finalizers) == 0 && reasons(labEvents(t, c, labNS, name))[kube.ReasonInvalidName] == 1, fmt.Sprintf("%+v %v", l.Status, l.Finalizers)
		})
		l, _ := getLab(t, c, labNS, name)
		t.Logf("%.20s…: %s: %s%s", name, l.Status.Phase, l.Status.Message, describe(labEvents(t, c, labNS, name)))
	}
	waitFor(t, time.Minute, "no agents", func() (bool, string) {
		l, err := getLab(t, c, labNS, "lonely")
		if err != nil {
			return false, err.Error()
		}
		st, reason := condition(l, kube.ConditionReady)
		dst, _ := condition(l, kube.ConditionDegraded)
		return st == metav1.ConditionFalse && reason == kube.ReasonNoAgents && dst == metav1.ConditionFalse &&
			l.Status.ObservedGeneration == l.Generation && len(l.Finalizers) == 1 &&
			reasons(labEvents(t, c, labNS, "lonely"))[kube.ReasonNoAgents] == 1, fmt.Sprintf("%+v", l.Status)
	})
	for _, name := range []string{long, older.Name, "lonely", ok.Name} {
		if err := c.Delete(ctx, lab(name, kube.LabSpec{})); err != nil {
			t.Fatalf("delete %.20s…: %v", name, err)
		}
		waitFor(t, 30*time.Second, "deleted Lab gone", func() (bool, string) {
			_, err := getLab(t, c, labNS, name)
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
	}
}

// explained reads the Lab's schema as kubectl explain does — the API
// server's OpenAPI v3 document of rocelab.dev/v1alpha1 — and the CRD's
// own, and checks the spec's fields are described there.
func explained(t *testing.T, cfg *rest.Config, c client.Client) {
	t.Helper()
	var crd apiextv1.CustomResourceDefinition
	if err := c.Get(t.Context(), client.ObjectKey{Name: "labs." + kube.Group}, &crd); err != nil {
		t.Fatal(err)
	}
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	for _, f := range []string{"topology", "source", "scale", "seed"} {
		if spec.Properties[f].Description == "" {
			t.Errorf("the served CRD's spec.%s has no description", f)
		}
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Description string
					Properties  map[string]struct{ Description string }
				}
			}
		}
	}
	// The API server publishes a new CRD's OpenAPI within seconds.
	waitFor(t, time.Minute, "OpenAPI v3 of rocelab.dev/v1alpha1", func() (bool, string) {
		paths, err := dc.OpenAPIV3().Paths()
		if err != nil {
			return false, err.Error()
		}
		gv, ok := paths["apis/"+kube.Group+"/"+kube.Version]
		if !ok {
			return false, "not published"
		}
		b, err := gv.Schema("application/json")
		if err != nil {
			return false, err.Error()
		}
		return json.Unmarshal(b, &doc) == nil && len(doc.Components.Schemas["dev.rocelab.v1alpha1.Lab"].Properties) > 0, "no Lab schema"
	})
	l := doc.Components.Schemas["dev.rocelab.v1alpha1.Lab"]
	t.Logf("kubectl explain lab.spec.topology: %s", l.Properties["spec"].Properties["topology"].Description)
	for _, f := range []string{"topology", "source", "scale", "seed"} {
		if l.Properties["spec"].Properties[f].Description == "" {
			t.Errorf("OpenAPI v3: spec.%s has no description", f)
		}
	}
	for _, f := range []string{"spec", "status"} {
		if l.Properties[f].Description == "" {
			t.Errorf("OpenAPI v3: %s has no description", f)
		}
	}
}

// columns reads the Labs as a Table, as kubectl get does, and checks its
// columns.
func columns(t *testing.T, cfg *rest.Config) {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, cfg.Host+"/apis/"+kube.Group+"/"+kube.Version+"/namespaces/default/labs", nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var table metav1.Table
	if err := json.Unmarshal(b, &table); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("labs as a table: %s %v: %s", resp.Status, err, b)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if got, want := strings.Join(names, " "), "Name Phase Ready Machines Nodes Age Message"; got != want {
		t.Errorf("kubectl get labs columns: %s, want %s", got, want)
	}
}
