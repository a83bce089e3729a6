package netns

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
)

func TestRuntime(t *testing.T) {
	testenv.RequireRoot(t)
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	r := &Runtime{Executables: []string{sleep}, Grace: time.Second}
	ctx := context.Background()
	lab := fmt.Sprintf("rt%d", os.Getpid())
	dir := t.TempDir()
	spec := sandbox.NodeSpec{Lab: lab, Node: "sw0", Argv: []string{sleep, "60"}, RunDir: dir, Log: filepath.Join(dir, "sw0.log")}
	n, err := r.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Remove(ctx, n.Ref); Delete(n.Ref.ID) })
	if !n.Process.Alive() || !Exists(n.Ref.ID) || n.NetNSPath != Path(n.Ref.ID) {
		t.Fatalf("node %+v not running", n)
	}
	var out bytes.Buffer
	code, err := r.Exec(ctx, n.Ref, []string{"sh", "-c", "readlink /proc/self/ns/net; exit 3"}, sandbox.Stdio{Out: &out})
	if err != nil || code != 3 {
		t.Fatalf("Exec = %d, %v", code, err)
	}
	if ino := fmt.Sprintf("net:[%d]", inode(t, n.NetNSPath)); !bytes.Contains(out.Bytes(), []byte(ino)) {
		t.Errorf("Exec ran in %q, want %s", out.String(), ino)
	}
	refs, err := r.Leftovers(ctx, lab)
	if err != nil || len(refs) != 1 || refs[0] != n.Ref {
		t.Errorf("Leftovers = %+v, %v; want [%+v]", refs, err, n.Ref)
	}
	if err := r.Remove(ctx, n.Ref); err != nil {
		t.Fatal(err)
	}
	if n.Process.Alive() || Exists(n.Ref.ID) {
		t.Error("node survived Remove")
	}
	if err := r.Remove(ctx, n.Ref); err != nil {
		t.Errorf("second Remove: %v", err)
	}
	if refs, _ := r.Leftovers(ctx, lab); len(refs) != 0 {
		t.Errorf("Leftovers after Remove = %+v", refs)
	}
}
