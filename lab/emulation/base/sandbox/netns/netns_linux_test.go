package netns

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// tempNS creates a uniquely named namespace removed at cleanup.
func tempNS(t *testing.T, tag string) string {
	t.Helper()
	testenv.RequireRoot(t)
	name := fmt.Sprintf("rltest-%d-%s", os.Getpid(), tag)
	if err := Create(name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Delete(name); err != nil {
			t.Error(err)
		}
	})
	return name
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

func TestCreateDoDelete(t *testing.T) {
	name := tempNS(t, "a")
	if !Exists(name) {
		t.Fatal("Exists = false after Create")
	}
	if err := Create(name); err == nil {
		t.Error("second Create succeeded")
	}
	names, err := List()
	if err != nil || !strings.Contains(strings.Join(names, " "), name) {
		t.Errorf("List = %v, %v", names, err)
	}
	nsIno := inode(t, Path(name))
	rootIno := inode(t, "/proc/thread-self/ns/net")

	var inside uint64
	var loUp bool
	err = Do(name, func() error {
		inside = inode(t, "/proc/thread-self/ns/net")
		lo, err := netlink.LinkByName("lo")
		if err != nil {
			return err
		}
		loUp = lo.Attrs().Flags&(1<<0) != 0 // net.FlagUp
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if inside != nsIno || inside == rootIno {
		t.Errorf("Do ran in netns inode %d, want %d (root %d)", inside, nsIno, rootIno)
	}
	if !loUp {
		t.Error("lo is down in a new namespace")
	}
	// After Do, no thread of ours is left in the namespace (sample a few).
	for range 20 {
		if got := inode(t, "/proc/thread-self/ns/net"); got != rootIno {
			t.Fatalf("thread %d left in netns %d", unix.Gettid(), got)
		}
	}

	h, err := Handle(name)
	if err != nil {
		t.Fatal(err)
	}
	links, err := h.LinkList()
	h.Close()
	if err != nil || len(links) != 1 || links[0].Attrs().Name != "lo" {
		t.Errorf("links in new netns = %v, %v", links, err)
	}
}

func TestStartInNamespace(t *testing.T) {
	name := tempNS(t, "p")
	cmd := exec.Command("sleep", "30")
	p, err := Start(name, cmd)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	if p.StartTime == 0 || !p.Alive() {
		t.Fatalf("process %v not alive", p)
	}
	if got, want := inode(t, fmt.Sprintf("/proc/%d/ns/net", p.PID)), inode(t, Path(name)); got != want {
		t.Errorf("child netns inode %d, want %d", got, want)
	}
	if pgid, _ := unix.Getpgid(p.PID); pgid != p.PID {
		t.Errorf("child pgid %d, want its own group %d", pgid, p.PID)
	}
	if err := p.Stop(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	<-done
	done <- nil
}

func TestDeleteIdempotent(t *testing.T) {
	testenv.RequireRoot(t)
	name := fmt.Sprintf("rltest-%d-gone", os.Getpid())
	if err := Delete(name); err != nil {
		t.Errorf("Delete of a missing namespace = %v", err)
	}
	if err := Create(name); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := Delete(name); err != nil {
			t.Fatal(err)
		}
	}
	if Exists(name) {
		t.Error("exists after Delete")
	}
	if err := Do(name, func() error { return nil }); err == nil {
		t.Error("Do in a deleted namespace succeeded")
	}
	for _, bad := range []string{"", "..", "a/b"} {
		if err := Create(bad); err == nil {
			t.Errorf("Create(%q) succeeded", bad)
		}
	}
}
