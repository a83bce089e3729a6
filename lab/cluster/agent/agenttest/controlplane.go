//go:build linux

package agenttest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
)

// ControlPlane is a real Kubernetes control plane — etcd and
// kube-apiserver — in the harness's client namespace, reachable from
// every machine at the client's underlay address.
type ControlPlane struct {
	// Kubeconfig is a file that reaches it as cluster-admin.
	Kubeconfig string
	// URL of the API server.
	URL string
}

// K8sBinaries returns the directory holding kube-apiserver and etcd
// (scripts/k8s-bin.sh builds them; ROCELAB_K8S_BIN names another), waiting
// for a build of them in progress (up to BuildWait), or reports them
// missing: a skip, a failure under CI.
func K8sBinaries(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("ROCELAB_K8S_BIN"); dir != "" {
		if !haveK8s(dir) {
			testenv.Missing(t, "kube-apiserver and etcd in $ROCELAB_K8S_BIN "+dir)
		}
		return dir
	}
	cache := os.Getenv("ROCELAB_K8S_CACHE")
	if cache == "" {
		cache = "/var/cache/rocelab/k8s"
	}
	deadline := time.Now().Add(BuildWait)
	for logged := false; ; {
		dirs, _ := filepath.Glob(filepath.Join(cache, "kubernetes-*"))
		building := false
		for _, d := range dirs {
			if strings.HasSuffix(d, ".building") {
				b, _ := os.ReadFile(d)
				var pid int
				fmt.Sscan(string(b), &pid)
				// Lookup, not Process{PID: pid}: Alive compares start
				// times, and a zero one never matches a live process.
				if p, err := proc.Lookup(pid); pid > 0 && err == nil && p.Alive() {
					building = true
				}
				continue
			}
			if haveK8s(d) {
				return d
			}
		}
		if !building || time.Now().After(deadline) {
			testenv.Missing(t, "kube-apiserver and etcd (scripts/k8s-bin.sh builds them into "+cache+")")
			return ""
		}
		if !logged {
			t.Logf("waiting for scripts/k8s-bin.sh to build kube-apiserver and etcd (up to %v)", BuildWait)
			logged = true
		}
		time.Sleep(5 * time.Second)
	}
}

// BuildWait is how long K8sBinaries waits for a build in progress: a cold
// build of kube-apiserver takes 10–16 minutes of a 2-core machine.
const BuildWait = 25 * time.Minute

func haveK8s(dir string) bool {
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if fi, err := os.Stat(filepath.Join(dir, b)); err != nil || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// StartControlPlane starts etcd and kube-apiserver in the client
// namespace and waits until the API server is ready (stopped at the end
// of the test, by PID).
func (u *Underlay) StartControlPlane(t *testing.T) *ControlPlane {
	t.Helper()
	bin := K8sBinaries(t)
	dir := t.TempDir()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	saKey := filepath.Join(dir, "sa.key")
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(saKey, pemKey, 0o600); err != nil {
		t.Fatal(err)
	}
	token := fmt.Sprintf("rocelab-%x", key.N.Bytes()[:8])
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+",admin,admin,system:masters\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	u.start(t, "etcd", filepath.Join(bin, "etcd"), "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", "http://127.0.0.1:2379", "--listen-peer-urls", "http://127.0.0.1:2380")
	addr := u.Client.Addr.String()
	u.start(t, "kube-apiserver", filepath.Join(bin, "kube-apiserver"),
		"--etcd-servers", "http://127.0.0.1:2379",
		"--bind-address", addr, "--advertise-address", addr, "--secure-port", "6443",
		"--cert-dir", filepath.Join(dir, "certs"),
		"--token-auth-file", tokens, "--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", saKey, "--service-account-signing-key-file", saKey,
		"--service-cluster-ip-range", "10.96.0.0/16",
		// As kubeadm's: privileged containers allowed (the chart's agent).
		"--allow-privileged=true",
		"--enable-priority-and-fairness=false")
	cp := &ControlPlane{URL: "https://" + net.JoinHostPort(addr, "6443"), Kubeconfig: filepath.Join(dir, "kubeconfig")}
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: harness
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: %q}
contexts:
- name: harness
  context: {cluster: harness, user: admin}
current-context: harness
`, cp.URL, token)
	if err := os.WriteFile(cp.Kubeconfig, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	u.waitReady(t, cp.URL+"/readyz", token, 60*time.Second)
	// The namespace the agents and Labs live in by default
	// (kube.DefaultNamespace), as the chart makes it.
	u.post(t, cp.URL+"/api/v1/namespaces", token, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"rocelab"}}`)
	return cp
}

// DialContext dials addr from the client namespace: a client in the test
// process reaches the control plane with it (rest.Config's Dial).
func (u *Underlay) DialContext(ctx context.Context, network, addr string) (c net.Conn, err error) {
	err = netns.Do(u.Client.NetNS, func() (err error) {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// post sends body (JSON) to url from the client namespace with token and
// fails the test unless it answers 201 or 409 (there already).
func (u *Underlay) post(t *testing.T, url, token, body string) {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DialContext: u.DialContext}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusConflict {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %s: %s", url, resp.Status, b)
	}
}

// start starts a daemon of the harness in the client namespace, stopped
// by PID at the end of the test; its output is shown if the test fails.
func (u *Underlay) start(t *testing.T, name, path string, args ...string) {
	t.Helper()
	var log bytes.Buffer
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = &log, &log
	p, err := netns.Start(u.Client.NetNS, cmd)
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { cmd.Wait(); close(waited) }()
	t.Cleanup(func() {
		p.Stop(5 * time.Second)
		<-waited
		if t.Failed() {
			out := log.String()
			if len(out) > 4000 {
				out = "…" + out[len(out)-4000:]
			}
			t.Logf("%s:\n%s", name, out)
		}
	})
}

// StartDaemon starts `path args…` in the client namespace for the rest of
// the test (rocelab-controller, say).
func (u *Underlay) StartDaemon(t *testing.T, name, path string, args ...string) {
	t.Helper()
	u.start(t, name, path, args...)
}

// Get reads url from the client namespace, retrying until it answers 200
// or timeout passes, and returns the body.
func (u *Underlay) Get(t *testing.T, url string, timeout time.Duration) string {
	t.Helper()
	return u.waitReady(t, url, "", timeout)
}

// waitReady polls url from the client namespace until it answers 200, and
// returns the body.
func (u *Underlay) waitReady(t *testing.T, url, token string, timeout time.Duration) string {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DialContext: u.DialContext}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err == nil {
			body, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && rerr == nil {
				return string(body)
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s does not answer 200 after %v: %s", url, timeout, last)
	return ""
}
