package helm

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func render(t *testing.T, values map[string]any) *Rendered {
	t.Helper()
	r, err := Render(ChartDir(), Release{Name: "rocelab", Namespace: "rocelab", Values: values})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func find(t *testing.T, r *Rendered, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range r.Objects {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s", kind, name)
	return nil
}

// at walks obj by keys (strings) and list indices (ints).
func at(obj any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := obj.(map[string]any)
			obj = m[k]
		case int:
			l, _ := obj.([]any)
			if k >= len(l) {
				return nil
			}
			obj = l[k]
		}
	}
	return obj
}

func secretData(t *testing.T, s *unstructured.Unstructured, key string) []byte {
	t.Helper()
	v, _ := at(s.Object, "data", key).(string)
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) == 0 {
		t.Fatalf("secret %s: %s: %q, %v", s.GetName(), key, v, err)
	}
	return b
}

// rules lists an RBAC role's rules as "group/resource: verbs" lines.
func rules(o *unstructured.Unstructured) []string {
	var out []string
	for _, r := range at(o.Object, "rules").([]any) {
		var groups, res, verbs []string
		for _, g := range at(r, "apiGroups").([]any) {
			groups = append(groups, g.(string))
		}
		for _, x := range at(r, "resources").([]any) {
			res = append(res, x.(string))
		}
		for _, v := range at(r, "verbs").([]any) {
			verbs = append(verbs, v.(string))
		}
		out = append(out, fmt.Sprintf("%s/%s: %s", strings.Join(groups, ","), strings.Join(res, ","), strings.Join(verbs, " ")))
	}
	return out
}

func TestRenderDefaults(t *testing.T) {
	r := render(t, nil)
	var kinds []string
	for _, o := range r.Objects {
		kinds = append(kinds, o.GetKind()+" "+o.GetName())
		if ns := o.GetNamespace(); ns != "rocelab" && !strings.HasPrefix(o.GetKind(), "Cluster") {
			t.Errorf("%s %s in namespace %q", o.GetKind(), o.GetName(), ns)
		}
	}
	want := []string{
		"ServiceAccount rocelab-agent", "ServiceAccount rocelab-controller",
		"Secret rocelab-agent-token", "Secret rocelab-agent-ca",
		"ClusterRole rocelab-controller", "ClusterRoleBinding rocelab-controller",
		"Role rocelab-controller", "Role rocelab-agent", "RoleBinding rocelab-controller", "RoleBinding rocelab-agent",
		"DaemonSet rocelab-agent", "Deployment rocelab-controller",
	}
	if d := cmp.Diff(want, kinds); d != "" {
		t.Errorf("objects (-want +got):\n%s", d)
	}

	// Least privilege, spelled out: a new rule must be added here.
	if d := cmp.Diff([]string{
		"rocelab.dev/labs: get list watch update patch",
		"rocelab.dev/labs/status: get update patch",
		"rocelab.dev/labs/finalizers: update",
		"events.k8s.io/events: create patch",
		"/events: create patch",
	}, rules(find(t, r, "ClusterRole", "rocelab-controller"))); d != "" {
		t.Errorf("controller's ClusterRole (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"coordination.k8s.io/leases: get list watch create update patch"},
		rules(find(t, r, "Role", "rocelab-controller"))); d != "" {
		t.Errorf("controller's Role (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"coordination.k8s.io/leases: get create update delete"},
		rules(find(t, r, "Role", "rocelab-agent"))); d != "" {
		t.Errorf("agent's Role (-want +got):\n%s", d)
	}

	// The generated token and lab CA.
	if tok := secretData(t, find(t, r, "Secret", "rocelab-agent-token"), "token"); len(tok) != 32 {
		t.Errorf("token %q: want 32 characters", tok)
	}
	ca := find(t, r, "Secret", "rocelab-agent-ca")
	cb, _ := pem.Decode(secretData(t, ca, "ca.pem"))
	kb, _ := pem.Decode(secretData(t, ca, "ca-key.pem"))
	if cb == nil || kb == nil {
		t.Fatal("lab CA: not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil || !cert.IsCA {
		t.Errorf("lab CA certificate: %v, IsCA %v", err, cert != nil && cert.IsCA)
	}
	if _, err := x509.ParseECPrivateKey(kb.Bytes); err != nil { // as internal/labca reads it
		t.Errorf("lab CA key: %v", err)
	}
	if r2 := render(t, nil); string(secretData(t, find(t, r2, "Secret", "rocelab-agent-token"), "token")) ==
		string(secretData(t, find(t, r, "Secret", "rocelab-agent-token"), "token")) {
		t.Error("two installs, the same token")
	}

	ds := find(t, r, "DaemonSet", "rocelab-agent")
	pod := at(ds.Object, "spec", "template", "spec")
	if at(pod, "hostNetwork") != true || at(pod, "hostPID") != true {
		t.Errorf("agent: hostNetwork %v, hostPID %v", at(pod, "hostNetwork"), at(pod, "hostPID"))
	}
	c := at(pod, "containers", 0)
	if at(c, "securityContext", "privileged") != true {
		t.Errorf("agent securityContext %v", at(c, "securityContext"))
	}
	for _, m := range at(c, "volumeMounts").([]any) {
		prop, _ := at(m, "mountPropagation").(string)
		if want := map[string]string{"/run/netns": "Bidirectional"}[at(m, "mountPath").(string)]; prop != want {
			t.Errorf("agent mount %v: propagation %q, want %q", at(m, "mountPath"), prop, want)
		}
	}
	args := fmt.Sprint(at(c, "args"))
	for _, a := range []string{"--underlay=$(NODE_IP)", "--machine=$(NODE_NAME)", "--namespace=rocelab", "--tls-dir=/etc/rocelab/ca"} {
		if !strings.Contains(args, a) {
			t.Errorf("agent args %s lack %s", args, a)
		}
	}
	if img := at(c, "image"); img != "rocelab:dev" {
		t.Errorf("agent image %v", img)
	}

	dep := find(t, r, "Deployment", "rocelab-controller")
	if n := at(dep.Object, "spec", "replicas"); fmt.Sprint(n) != "2" {
		t.Errorf("controller replicas %v", n)
	}
	cc := at(dep.Object, "spec", "template", "spec", "containers", 0)
	args = fmt.Sprint(at(cc, "args"))
	for _, a := range []string{"--leader-elect=true", "--leader-elect-namespace=rocelab", "--install-crd=false"} {
		if !strings.Contains(args, a) {
			t.Errorf("controller args %s lack %s", args, a)
		}
	}
	if d := cmp.Diff(map[string]any{"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
		"capabilities": map[string]any{"drop": []any{"ALL"}}}, at(cc, "securityContext")); d != "" {
		t.Errorf("controller securityContext (-want +got):\n%s", d)
	}
	if !strings.Contains(r.Files["rocelab/templates/NOTES.txt"], "rocelab deploy --runtime kubernetes") {
		t.Errorf("NOTES.txt: %q", r.Files["rocelab/templates/NOTES.txt"])
	}
}

func TestRenderValues(t *testing.T) {
	r := render(t, map[string]any{
		"namespace":  map[string]any{"create": true},
		"apiServer":  map[string]any{"host": "10.0.0.1", "port": "6443"},
		"image":      map[string]any{"repository": "registry.example/rocelab", "tag": "v1"},
		"agent":      map[string]any{"privileged": false, "existingTokenSecret": "mine", "tls": false, "extraArgs": []any{"--underlay-dev", "eth1"}},
		"controller": map[string]any{"installCRD": true, "replicas": 3},
	})
	if ns := find(t, r, "Namespace", "rocelab"); at(ns.Object, "metadata", "labels", "pod-security.kubernetes.io/enforce") != "privileged" {
		t.Errorf("namespace labels %v", at(ns.Object, "metadata", "labels"))
	}
	for _, o := range r.Objects {
		if o.GetKind() == "Secret" {
			t.Errorf("secret %s rendered with existingTokenSecret and tls off", o.GetName())
		}
	}
	if !slices.Contains(rules(find(t, r, "ClusterRole", "rocelab-controller")),
		"apiextensions.k8s.io/customresourcedefinitions: get create update patch") {
		t.Error("installCRD: no RBAC on CRDs")
	}
	c := at(find(t, r, "DaemonSet", "rocelab-agent").Object, "spec", "template", "spec", "containers", 0)
	if d := cmp.Diff(map[string]any{"capabilities": map[string]any{"drop": []any{"ALL"}, "add": []any{"NET_ADMIN", "NET_RAW", "SYS_ADMIN"}}},
		at(c, "securityContext")); d != "" {
		t.Errorf("unprivileged agent (-want +got):\n%s", d)
	}
	if p := at(c, "volumeMounts", 0, "mountPropagation"); p != nil {
		t.Errorf("unprivileged agent: propagation %v", p)
	}
	env := fmt.Sprint(at(c, "env"))
	for _, e := range []string{"name:mine", "KUBERNETES_SERVICE_HOST value:10.0.0.1", "KUBERNETES_SERVICE_PORT value:6443"} {
		if !strings.Contains(env, e) {
			t.Errorf("agent env %s lacks %s", env, e)
		}
	}
	if strings.Contains(env, "ROCELAB_AGENT_CA") || strings.Contains(fmt.Sprint(at(c, "args")), "--tls-dir") {
		t.Errorf("tls off: %s %v", env, at(c, "args"))
	}
	if !strings.Contains(fmt.Sprint(at(c, "args")), "--underlay-dev eth1") {
		t.Errorf("extraArgs: %v", at(c, "args"))
	}
	if img := at(c, "image"); img != "registry.example/rocelab:v1" {
		t.Errorf("image %v", img)
	}
	dep := find(t, r, "Deployment", "rocelab-controller")
	if fmt.Sprint(at(dep.Object, "spec", "replicas")) != "3" ||
		!strings.Contains(fmt.Sprint(at(dep.Object, "spec", "template", "spec", "containers", 0, "args")), "--install-crd=true") {
		t.Errorf("controller: %v", at(dep.Object, "spec"))
	}
}

// TestLint is `helm lint` of the chart, with its defaults and with every
// optional part on: no warning, no error.
func TestLint(t *testing.T) {
	for _, v := range []map[string]any{nil, {"namespace": map[string]any{"create": true}, "controller": map[string]any{"installCRD": true}}} {
		bad, all := Lint(ChartDir(), "rocelab", v)
		for _, m := range bad {
			t.Errorf("lint %v: %s", v, m)
		}
		if testing.Verbose() {
			for _, m := range all {
				t.Logf("lint: %s", m)
			}
		}
	}
}
