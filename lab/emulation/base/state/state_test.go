package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestLabLifecycle(t *testing.T) {
	root := t.TempDir()
	l, err := Open(root, "lab1", false)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ns, err := l.Intend(Object{Kind: KindNetns, Node: "sw0", Name: NetnsName("lab1", "sw0")})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := l.Intend(Object{Kind: KindProcess, Node: "sw0", NetNS: NetnsName("lab1", "sw0")})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Created(ns, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.Created(pr, func(o *Object) { o.PID, o.StartTime = 42, 4242 }); err != nil {
		t.Fatal(err)
	}
	if err := l.SetInfo("topology", "laptop.yaml"); err != nil {
		t.Fatal(err)
	}

	// Another process (here: a reader) sees exactly what was recorded.
	f, err := Read(root, "lab1")
	if err != nil {
		t.Fatal(err)
	}
	want := []Object{
		{ID: 1, Kind: KindNetns, Status: Created, Node: "sw0", Name: "rl-lab1-sw0"},
		{ID: 2, Kind: KindProcess, Status: Created, Node: "sw0", NetNS: "rl-lab1-sw0", PID: 42, StartTime: 4242},
	}
	if d := cmp.Diff(want, f.Objects, cmpopts.IgnoreFields(Object{}, "Time")); d != "" {
		t.Errorf("objects (-want +got):\n%s", d)
	}
	if f.Info["topology"] != "laptop.yaml" {
		t.Errorf("info = %v", f.Info)
	}

	// Permissions: root-only.
	for path, want := range map[string]os.FileMode{l.Dir(): 0o700 | os.ModeDir, filepath.Join(l.Dir(), StateFile): 0o600, filepath.Join(l.Dir(), LockFile): 0o600} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode() != want {
			t.Errorf("%s mode = %v, want %v", path, st.Mode(), want)
		}
	}
	// No temporary files are left behind.
	ents, _ := os.ReadDir(l.Dir())
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("leftover temp file %s", e.Name())
		}
	}

	if err := l.Forget(ns); err != nil {
		t.Fatal(err)
	}
	if err := l.Forget(ns); err != nil {
		t.Fatal("second Forget:", err)
	}
	if got := l.Objects(); len(got) != 1 || got[0].ID != pr {
		t.Errorf("after Forget: %+v", got)
	}

	labs, err := List(root)
	if err != nil || !cmp.Equal(labs, []string{"lab1"}) {
		t.Errorf("List = %v, %v", labs, err)
	}
	if err := l.Remove(); err != nil {
		t.Fatal(err)
	}
	if labs, _ := List(root); len(labs) != 0 {
		t.Errorf("List after Remove = %v", labs)
	}
}

func TestLockExcludes(t *testing.T) {
	root := t.TempDir()
	l, err := Open(root, "x", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(root, "x", false); !errors.Is(err, ErrBusy) {
		t.Fatalf("second Open: err = %v, want ErrBusy", err)
	}
	// A waiter gets the lock once the holder closes, and sees its writes.
	var wg sync.WaitGroup
	var got []Object
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		l2, err := Open(root, "x", true)
		if err != nil {
			werr = err
			return
		}
		got = l2.Objects()
		werr = l2.Close()
	}()
	if _, err := l.Intend(Object{Kind: KindLink, Name: "rl123-0p0"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	wg.Wait()
	if werr != nil || len(got) != 1 {
		t.Fatalf("waiter: %v, objects %+v", werr, got)
	}
}

func TestReopenKeepsIDs(t *testing.T) {
	root := t.TempDir()
	l, _ := Open(root, "x", false)
	a, _ := l.Intend(Object{Kind: KindNetns, Name: "a"})
	l.Forget(a)
	l.Close()
	l, err := Open(root, "x", false)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	b, _ := l.Intend(Object{Kind: KindNetns, Name: "b"})
	if b <= a {
		t.Errorf("ID reused: %d after %d", b, a)
	}
}

func TestNames(t *testing.T) {
	long := strings.Repeat("n", 80)
	tests := []struct {
		lab, node, want string
	}{
		{"lab1", "sw0", "rl-lab1-sw0"},
		{"ai-zone", "gpu-12", "rl-ai-zone-gpu-12"},
		{"lab1", "a/b", "rl-lab1-~"},
		{"lab1", long, "rl-lab1-~"},
	}
	for _, tt := range tests {
		got := NetnsName(tt.lab, tt.node)
		if !strings.HasPrefix(got, tt.want) || (!strings.HasSuffix(tt.want, "~") && got != tt.want) {
			t.Errorf("NetnsName(%q, %q) = %q, want %q…", tt.lab, tt.node, got, tt.want)
		}
		if len(got) > MaxNetnsName || !NetnsOf(tt.lab, got) {
			t.Errorf("NetnsName(%q, %q) = %q: too long or not recognised", tt.lab, tt.node, got)
		}
	}
	if NetnsName("l", long) == NetnsName("l", long+"x") {
		t.Error("hashed names collide")
	}
	if NetnsOf("lab1", "rl-lab10-x") || NetnsOf("lab1", "rl-lab1-") {
		t.Error("NetnsOf matches another lab")
	}
	for _, bad := range []string{"", "-x", ".x", "a:b", "a/b", "a b", "é", strings.Repeat("a", 49)} {
		if ValidName(bad) == nil {
			t.Errorf("ValidName(%q) = nil", bad)
		}
	}
	for _, good := range []string{"a", "9", "A.b_c-9", "x-", strings.Repeat("a", 48)} {
		if err := ValidName(good); err != nil {
			t.Errorf("ValidName(%q) = %v", good, err)
		}
	}
	if got := NetnsName("lab1", "n.o_d-e"); got != "rl-lab1-n.o_d-e" {
		t.Errorf("NetnsName of a file-safe node = %q", got)
	}
	a := IfAlias("lab1", "node:x", "p3")
	if lab, node, port, ok := ParseAlias(a); !ok || lab != "lab1" || node != "node:x" || port != "p3" {
		t.Errorf("ParseAlias(%q) = %q %q %q %v", a, lab, node, port, ok)
	}
	for _, bad := range []string{"", "rocelab:", "rocelab:lab", "rocelab:lab:node", "rocelab:lab:node:", "other:lab:n:p"} {
		if _, _, _, ok := ParseAlias(bad); ok {
			t.Errorf("ParseAlias(%q) ok", bad)
		}
	}
}

// TestBatches records, marks and forgets objects in batches, each batch
// one write that another process sees whole.
func TestBatches(t *testing.T) {
	root := t.TempDir()
	l, err := Open(root, "lab1", false)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if ids, err := l.IntendAll(nil); err != nil || ids != nil {
		t.Fatalf("IntendAll(nil) = %v, %v", ids, err)
	}
	ids, err := l.IntendAll([]Object{
		{Kind: KindNetns, Node: "a", Name: "rl-lab1-a"},
		{Kind: KindProcess, Node: "a", NetNS: "rl-lab1-a"},
		{Kind: KindProcess, Node: "b", NetNS: "rl-lab1-b"},
	})
	if err != nil || !cmp.Equal(ids, []int{1, 2, 3}) {
		t.Fatalf("IntendAll = %v, %v", ids, err)
	}
	pids := []int{42, 43}
	if err := l.CreatedAll(ids[1:], func(i int, o *Object) { o.PID = pids[i]; o.ID = 99 }); err != nil {
		t.Fatal(err)
	}
	if err := l.CreatedAll([]int{1, 7}, nil); err == nil {
		t.Error("CreatedAll of an unknown ID succeeded")
	}
	f, err := Read(root, "lab1")
	if err != nil {
		t.Fatal(err)
	}
	want := []Object{
		{ID: 1, Kind: KindNetns, Status: Intent, Node: "a", Name: "rl-lab1-a"},
		{ID: 2, Kind: KindProcess, Status: Created, Node: "a", NetNS: "rl-lab1-a", PID: 42},
		{ID: 3, Kind: KindProcess, Status: Created, Node: "b", NetNS: "rl-lab1-b", PID: 43},
	}
	if d := cmp.Diff(want, f.Objects, cmpopts.IgnoreFields(Object{}, "Time")); d != "" {
		t.Errorf("after CreatedAll (-want +got):\n%s", d)
	}
	if err := l.ForgetAll([]int{3, 1, 12}); err != nil {
		t.Fatal(err)
	}
	f, err = Read(root, "lab1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want[1:2], f.Objects, cmpopts.IgnoreFields(Object{}, "Time")); d != "" {
		t.Errorf("after ForgetAll (-want +got):\n%s", d)
	}
	if ids, err := l.IntendAll([]Object{{Kind: KindNetns, Name: "x"}}); err != nil || ids[0] != 4 {
		t.Errorf("IDs after ForgetAll: %v, %v", ids, err)
	}
}
