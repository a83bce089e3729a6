package controller_test

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rocelab/rocelab/lab/cluster/agent/agenttest"
	"github.com/rocelab/rocelab/lab/cluster/kube"
	"github.com/rocelab/rocelab/lab/cluster/kube/controller"
	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
)

// tiny is a lab of two racks under one spine: the placement puts a rack
// on each machine and the spine's links cross.
const tiny = `name: tiny
defaults:
  be: {rate: 100G, delay: 1us, mtu: 4200}
nodes:
  host1: {kind: host, gpus: 1, rack: 1, frontend: false}
  host2: {kind: host, gpus: 1, rack: 2, frontend: false}
  rtsw1: {kind: switch, role: rtsw, rack: 1}
  rtsw2: {kind: switch, role: rtsw, rack: 2}
  ctsw1: {kind: switch, role: ctsw}
links:
  - host1:gpu0 -- rtsw1:p1
  - host2:gpu0 -- rtsw2:p1
  - rtsw1 -- ctsw1
  - rtsw2 -- ctsw1
`

// restConfig reaches the harness's API server from the test process:
// its connections are dialled in the client namespace.

// labNS is where the tests make their Labs: the namespace the agents
// announce themselves in (their default, rocelab), which the harness makes.
const labNS = "rocelab"

func restConfig(t *testing.T, u *agenttest.Underlay, cp *agenttest.ControlPlane) *rest.Config {
	t.Helper()
	cfg, err := kube.Config(cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dial = func(ctx context.Context, network, addr string) (c net.Conn, err error) {
		err = netns.Do(u.Client.NetNS, func() (err error) {
			var d net.Dialer
			c, err = d.DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
	return cfg
}

func newClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	crlog.SetLogger(logr.Discard())
	c, err := client.New(cfg, client.Options{Scheme: controller.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ctlProc is a rocelab-controller process in the client namespace.
type ctlProc struct {
	name   string
	p      proc.Process
	exited chan struct{}
	mu     sync.Mutex
	log    bytes.Buffer
}

func (c *ctlProc) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.log.Write(b)
}

// Log is what the controller logged so far.
func (c *ctlProc) Log() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.log.String()
}

// Stop stops it (SIGTERM: it gives up the lead) and waits for it.
func (c *ctlProc) Stop() {
	c.p.Stop(30 * time.Second)
	<-c.exited
}

// startController starts rocelab-controller (bin) with args in the
// client namespace, stopped at the end of the test.
func startController(t *testing.T, u *agenttest.Underlay, name, bin string, args ...string) *ctlProc {
	t.Helper()
	c := &ctlProc{name: name, exited: make(chan struct{})}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = c, c
	p, err := netns.Start(u.Client.NetNS, cmd)
	if err != nil {
		t.Fatal(err)
	}
	c.p = p
	go func() { cmd.Wait(); close(c.exited) }()
	t.Cleanup(func() {
		c.Stop()
		if t.Failed() {
			out := c.Log()
			if len(out) > 6000 {
				out = "…" + out[len(out)-6000:]
			}
			t.Logf("controller %s:\n%s", name, out)
		}
	})
	return c
}

// deploys counts the deploys the controller started, by Lab ("ns/name").
func (c *ctlProc) deploys() map[string]int {
	n := map[string]int{}
	for _, m := range deployLine.FindAllStringSubmatch(c.Log(), -1) {
		n[m[1]]++
	}
	return n
}

var deployLine = regexp.MustCompile(`msg=deploy lab=(\S+) `)

// waitFor polls cond every 200 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v (%s)", what, timeout, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// getLab reads ns/name.
func getLab(t *testing.T, c client.Client, ns, name string) (*kube.Lab, error) {
	t.Helper()
	var l kube.Lab
	err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &l)
	return &l, err
}

// condition is the Lab's condition typ ("" when it has none).
func condition(l *kube.Lab, typ string) (metav1.ConditionStatus, string) {
	c := meta.FindStatusCondition(l.Status.Conditions, typ)
	if c == nil {
		return "", ""
	}
	return c.Status, c.Reason
}

// labEvents lists the Events on Lab ns/name, as kubectl describe shows
// them (the core/v1 view of events.k8s.io/v1 Events).
func labEvents(t *testing.T, c client.Client, ns, name string) []corev1.Event {
	t.Helper()
	var evs corev1.EventList
	if err := c.List(context.Background(), &evs, client.InNamespace(ns), client.MatchingFields{"involvedObject.name": name, "involvedObject.kind": "Lab"}); err != nil {
		t.Fatal(err)
	}
	return evs.Items
}

// reasons counts the Lab's Events by reason.
func reasons(evs []corev1.Event) map[string]int {
	n := map[string]int{}
	for _, e := range evs {
		n[e.Reason]++
	}
	return n
}

func describe(evs []corev1.Event) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString("\n  " + e.Type + " " + e.Reason + " " + e.ReportingController + ": " + e.Message)
	}
	return b.String()
}
