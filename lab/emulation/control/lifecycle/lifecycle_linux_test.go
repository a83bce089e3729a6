package lifecycle_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/lifecycle"
	"github.com/rocelab/rocelab/lab/emulation/datapath/links"
	"github.com/rocelab/rocelab/topologies"
	"github.com/vishvananda/netlink"
)

var seq = rand.Uint32()

// labName is unique per test run.
func labName(t *testing.T) string {
	seq++
	return fmt.Sprintf("t%x%x", os.Getpid()&0xfffff, seq&0xfff)
}

// deployToy records and creates two node namespaces joined by a veth, and
// a sleeping node process in the first. It returns what it made.
type toy struct {
	nsA, nsB, ifA, ifB string
	p                  proc.Process
	wait               chan struct{}
}

func deployToy(t *testing.T, l *state.Lab) toy {
	t.Helper()
	var x toy
	var err error
	if x.nsA, err = lifecycle.CreateNetns(l, "sw0"); err != nil {
		t.Fatal(err)
	}
	if x.nsB, err = lifecycle.CreateNetns(l, "gpu1"); err != nil {
		t.Fatal(err)
	}
	x.ifA, x.ifB = topologies.IfName(l.Name(), 0, 1), topologies.IfName(l.Name(), 1, 0)
	h := topologies.LabHash(l.Name())
	v := links.Veth{
		A: links.End{NetNS: x.nsA, Name: x.ifA, MAC: topologies.MAC(h, 0, 1)},
		B: links.End{NetNS: x.nsB, Name: x.ifB, MAC: topologies.MAC(h, 1, 0)},
	}
	if err := lifecycle.CreateVeth(l, v, lifecycle.Port{Node: "sw0", Port: "p1"}, lifecycle.Port{Node: "gpu1", Port: "p0"}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "60")
	if x.p, err = lifecycle.StartProcess(l, "sw0", x.nsA, cmd); err != nil {
		t.Fatal(err)
	}
	x.wait = make(chan struct{})
	go func() { cmd.Wait(); close(x.wait) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-x.wait })
	return x
}

// gone fails t if anything of x survives.
func (x toy) gone(t *testing.T) {
	t.Helper()
	select {
	case <-x.wait:
	case <-time.After(3 * time.Second):
		t.Error("node process still running")
	}
	for _, ns := range []string{x.nsA, x.nsB} {
		if netns.Exists(ns) {
			t.Errorf("netns %s survived", ns)
		}
	}
}

func cleanupLab(t *testing.T, root, lab string) {
	t.Cleanup(func() {
		if _, err := lifecycle.Destroy(lab, lifecycle.Options{Root: root}); err != nil {
			t.Error(err)
		}
	})
}

func TestRollback(t *testing.T) {
	testenv.RequireRoot(t)
	root, lab := t.TempDir(), labName(t)
	cleanupLab(t, root, lab)
	l, err := state.Open(root, lab, false)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	x := deployToy(t, l)
	// A crash between Intend and creation: the state names an object that
	// does not exist, and rollback must get past it.
	if _, err := l.Intend(state.Object{Kind: state.KindNetns, Node: "never", Name: state.NetnsName(lab, "never")}); err != nil {
		t.Fatal(err)
	}
	if err := lifecycle.Rollback(l, time.Second); err != nil {
		t.Fatal(err)
	}
	x.gone(t)
	if objs := l.Objects(); len(objs) != 0 {
		t.Errorf("state still holds %+v", objs)
	}
	if err := lifecycle.Rollback(l, time.Second); err != nil {
		t.Errorf("second Rollback: %v", err)
	}
}

func TestDestroyAllSparesDecoys(t *testing.T) {
	testenv.RequireRoot(t)
	root := t.TempDir()
	labA, labB := labName(t), labName(t)
	mine := map[string]bool{labA: true, labB: true}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	opts := lifecycle.Options{Root: root, Grace: time.Second, Only: func(l string) bool { return mine[l] }, Executables: []string{sleep}}
	cleanupLab(t, root, labA)
	cleanupLab(t, root, labB)

	// Lab A: deployed, then its CLI went away (state closed).
	la, err := state.Open(root, labA, false)
	if err != nil {
		t.Fatal(err)
	}
	xa := deployToy(t, la)
	la.Close()
	// Lab B: deployed, then its state directory was lost; it also left a
	// tagged interface in the root namespace.
	lb, err := state.Open(root, labB, false)
	if err != nil {
		t.Fatal(err)
	}
	xb := deployToy(t, lb)
	stray := fmt.Sprintf("rls%x", os.Getpid()&0xffffff)
	if err := links.Create(links.Veth{
		A: links.End{Name: stray, Alias: state.IfAlias(labB, "host", "p0")},
		B: links.End{NetNS: xb.nsB, Name: stray + "b"},
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { links.Delete("", stray) })
	lb.Close()
	if err := os.RemoveAll(state.Dir(root, labB)); err != nil {
		t.Fatal(err)
	}

	// Decoys: a namespace named like lab A's but not tagged or recorded,
	// an unrelated namespace, and root-namespace veths with a foreign
	// alias and with none.
	decoyNS := []string{state.NetnsName(labA, "decoy"), fmt.Sprintf("rltest-decoy-%d", os.Getpid())}
	for _, ns := range decoyNS {
		if err := netns.Create(ns); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { netns.Delete(ns) })
	}
	decoyIf := fmt.Sprintf("rld%x", os.Getpid()&0xffffff)
	if err := links.Create(links.Veth{
		A: links.End{Name: decoyIf, Alias: "someone-else:" + labA},
		B: links.End{Name: decoyIf + "b"},
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { links.Delete("", decoyIf) })

	rep, err := lifecycle.DestroyAll(opts)
	if err != nil {
		t.Fatal(err)
	}
	xa.gone(t)
	xb.gone(t)
	if _, err := netlink.LinkByName(stray); err == nil {
		t.Error("lab B's tagged root-namespace interface survived")
	}
	if len(rep.Labs) != 2 {
		t.Errorf("report labs = %v, want %s and %s", rep.Labs, labA, labB)
	}
	for _, ns := range decoyNS {
		if !netns.Exists(ns) {
			t.Errorf("decoy netns %s was removed", ns)
		}
	}
	for _, n := range []string{decoyIf, decoyIf + "b"} {
		if _, err := netlink.LinkByName(n); err != nil {
			t.Errorf("decoy interface %s was removed: %v", n, err)
		}
	}
	if labs, _ := state.List(root); len(labs) != 0 {
		t.Errorf("run directories left: %v", labs)
	}
	// Idempotent.
	if rep, err := lifecycle.DestroyAll(opts); err != nil || len(rep.Removed) != 0 {
		t.Errorf("second DestroyAll = %+v, %v", rep, err)
	}
}

func TestDestroySkipsLockedLab(t *testing.T) {
	testenv.RequireRoot(t)
	root, lab := t.TempDir(), labName(t)
	l, err := state.Open(root, lab, false)
	if err != nil {
		t.Fatal(err)
	}
	x := deployToy(t, l)
	// l stays open: a deploy in progress. DestroyAll must not touch it.
	rep, err := lifecycle.DestroyAll(lifecycle.Options{Root: root, Only: func(s string) bool { return s == lab }})
	if err == nil {
		t.Error("DestroyAll of a locked lab reported no error")
	}
	if len(rep.Removed) != 0 || !netns.Exists(x.nsA) || !x.p.Alive() {
		t.Errorf("locked lab was touched: %+v", rep)
	}
	if err := lifecycle.Rollback(l, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := l.Remove(); err != nil {
		t.Fatal(err)
	}
	x.gone(t)
}
