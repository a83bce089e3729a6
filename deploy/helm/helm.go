// Package helm renders, lints and applies rocelab's Helm chart (the folder
// rocelab/ beside this file) with the Helm Go SDK (helm.sh/helm/v4: its
// chart loader, template engine and linter; not its install action, which
// would bring in the registry and storage clients): the chart's tests, and
// the test that installs it on a real kubelet and containerd on this
// machine (node_linux_test.go). No `helm` binary is needed.
package helm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// ChartDir is the chart's folder in the source tree.
func ChartDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "rocelab")
}

// Release names a release of the chart: what `helm install NAME -n
// NAMESPACE` would make.
type Release struct {
	Name, Namespace string
	Values          map[string]any
	// Config reaches the cluster for the templates' lookup (nil: lookup
	// finds nothing, as in `helm template`).
	Config *rest.Config
}

// Rendered is a rendered chart: its CRDs (crds/, applied first, never
// templated) and its objects, in the order Helm installs kinds.
type Rendered struct {
	CRDs    []*unstructured.Unstructured
	Objects []*unstructured.Unstructured
	// Files are the templates' output by file name (NOTES.txt included).
	Files map[string]string
}

// Render loads the chart in dir and renders it for r.
func Render(dir string, r Release) (*Rendered, error) {
	ch, err := loader.Load(dir)
	if err != nil {
		return nil, err
	}
	vals, err := util.ToRenderValues(ch, r.Values, common.ReleaseOptions{
		Name: r.Name, Namespace: r.Namespace, Revision: 1, IsInstall: true,
	}, nil)
	if err != nil {
		return nil, err
	}
	var e engine.Engine // lookup finds nothing
	if r.Config != nil {
		e = engine.New(r.Config)
	}
	files, err := e.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	out := &Rendered{Files: files}
	for _, f := range ch.CRDObjects() {
		objs, err := decode(f.Filename, f.File.Data)
		if err != nil {
			return nil, err
		}
		out.CRDs = append(out.CRDs, objs...)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !strings.HasSuffix(n, ".yaml") {
			continue
		}
		objs, err := decode(n, []byte(files[n]))
		if err != nil {
			return nil, err
		}
		out.Objects = append(out.Objects, objs...)
	}
	sort.SliceStable(out.Objects, func(i, j int) bool {
		return kindOrder(out.Objects[i].GetKind()) < kindOrder(out.Objects[j].GetKind())
	})
	return out, nil
}

// installOrder is Helm's order of kinds at install (a subset: the kinds
// the chart has); unknown kinds go last.
var installOrder = []string{"Namespace", "ServiceAccount", "Secret", "ClusterRole", "ClusterRoleBinding",
	"Role", "RoleBinding", "DaemonSet", "Deployment"}

func kindOrder(kind string) int {
	for i, k := range installOrder {
		if k == kind {
			return i
		}
	}
	return len(installOrder)
}

// decode splits a YAML stream into objects, skipping empty documents.
func decode(name string, data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	d := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var m map[string]any
		if err := d.Decode(&m); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}

// Lint runs Helm's linter (`helm lint`) over the chart in dir with values,
// and returns its messages of severity warning or worse, and all of them.
func Lint(dir, namespace string, values map[string]any) (bad, all []support.Message) {
	l := lint.RunAll(dir, values, namespace)
	for _, m := range l.Messages {
		if m.Severity >= support.WarningSev {
			bad = append(bad, m)
		}
	}
	return bad, l.Messages
}

// Apply applies objs to the cluster of cfg by server-side apply (field
// manager "rocelab-helm-test"), in order, as `kubectl apply
// --server-side` would: CRDs first, then the objects of a Rendered.
func Apply(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			mapper.Reset() // a CRD applied just now
			if m, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
				return fmt.Errorf("%s %s: %w", gvk.Kind, o.GetName(), err)
			}
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		force := true
		if _, err := ri.Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: "rocelab-helm-test", Force: force}); err != nil {
			return fmt.Errorf("apply %s %s: %w", gvk.Kind, o.GetName(), err)
		}
	}
	return nil
}
