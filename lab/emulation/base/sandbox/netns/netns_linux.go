package netns

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"

	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/vishvananda/netlink"
	vns "github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// RunDir is where named namespaces are bind-mounted (as with iproute2).
const RunDir = "/run/netns"

// Path is the file of the named namespace name.
func Path(name string) string { return filepath.Join(RunDir, name) }

func checkName(name string) error {
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name || len(name) > 255 {
		return fmt.Errorf("invalid namespace name %q", name)
	}
	return nil
}

// onThread runs fn on a locked OS thread of its own. If fn reports that
// the thread is clean (it did not change its namespace, or restored it),
// the thread is unlocked and returned to the pool; otherwise it dies with
// the goroutine.
func onThread(fn func() (clean bool, err error)) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		clean, err := fn()
		if clean {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

// ErrCovered is the class of a namespace whose mount another mount over
// RunDir hides (see ensureRunDir): it cannot be unmounted or removed by
// path until that mount goes.
var ErrCovered = errors.New("its mount is covered by a later mount of " + RunDir)

// ensureRunDir makes RunDir a mount point of its own, shared, before the
// first namespace is mounted in it — what iproute2 does before its first
// `ip netns add`. Otherwise a later `ip netns add` (by anyone) finds no
// mount point, binds RunDir onto itself, and the namespaces mounted there
// before it are covered: still alive, but their files can be neither
// unmounted nor removed (destroy failed with EBUSY on every one). With the
// mount point in place, iproute2 only makes it shared again. If RunDir
// already holds namespaces but is no mount point (made by an older
// rocelab, or another tool), it is left as it is: binding it now would
// cover them.
func ensureRunDir() error {
	if err := os.MkdirAll(RunDir, 0o755); err != nil {
		return err
	}
	err := unix.Mount("", RunDir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if err == nil || !errors.Is(err, unix.EINVAL) {
		return err
	}
	if names, _ := List(); len(names) > 0 {
		return nil
	}
	if err := unix.Mount(RunDir, RunDir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", RunDir, err)
	}
	return unix.Mount("", RunDir, "none", unix.MS_SHARED|unix.MS_REC, "")
}

// Create creates the named namespace name and brings its loopback up. It
// fails if a namespace of that name exists.
func Create(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := ensureRunDir(); err != nil {
		return fmt.Errorf("create netns %s: make %s a mount point: %w", name, RunDir, err)
	}
	err := onThread(func() (bool, error) {
		orig, err := vns.Get()
		if err != nil {
			return true, fmt.Errorf("get current netns: %w", err)
		}
		defer orig.Close()
		// NewNamed unshares the calling thread into the new namespace; the
		// thread is clean again only once it is back in orig.
		h, err := vns.NewNamed(name)
		if err != nil {
			if !errors.Is(err, os.ErrExist) {
				// NewNamed leaves the empty mount point if the mount failed.
				if st, serr := os.Stat(Path(name)); serr == nil && st.Size() == 0 && !isMounted(name) {
					os.Remove(Path(name))
				}
			}
			return vns.Set(orig) == nil, err
		}
		h.Close()
		lo, err := netlink.LinkByName("lo")
		if err == nil {
			err = netlink.LinkSetUp(lo)
		}
		if err != nil {
			err = fmt.Errorf("bring lo up: %w", err)
		}
		return vns.Set(orig) == nil, err
	})
	if err != nil {
		return fmt.Errorf("create netns %s: %w", name, err)
	}
	return nil
}

// isMounted reports whether Path(name) is a namespace mount (nsfs).
func isMounted(name string) bool {
	var st unix.Statfs_t
	return unix.Statfs(Path(name), &st) == nil && st.Type == unix.NSFS_MAGIC
}

// Exists reports whether the named namespace exists.
func Exists(name string) bool { return checkName(name) == nil && isMounted(name) }

// Delete removes the named namespace. Interfaces in it go away when the
// last process in it exits. Deleting a namespace that does not exist is
// not an error.
func Delete(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	p := Path(name)
	if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if isMounted(name) {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("delete netns %s: %w", name, err)
		}
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		if errors.Is(err, unix.EBUSY) && !isMounted(name) {
			// The file is a mount point no path reaches: another mount over
			// RunDir covers it (ensureRunDir).
			return fmt.Errorf("delete netns %s: %w (it stays until that mount is unmounted or the machine restarts)", name, ErrCovered)
		}
		return fmt.Errorf("delete netns %s: %w", name, err)
	}
	return nil
}

// List returns the names of the named namespaces, sorted.
func List() ([]string, error) {
	ents, err := os.ReadDir(RunDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list netns: %w", err)
	}
	var names []string
	for _, e := range ents {
		if isMounted(e.Name()) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

// Open returns a handle (an open file) of the named namespace, or of the
// caller's namespace for "". The caller closes it.
func Open(name string) (vns.NsHandle, error) {
	if name == "" {
		return vns.Get()
	}
	if err := checkName(name); err != nil {
		return vns.None(), err
	}
	h, err := vns.GetFromPath(Path(name))
	if err != nil {
		return vns.None(), fmt.Errorf("open netns %s: %w", name, err)
	}
	return h, nil
}

// Do runs fn with the calling thread in the named namespace ("" runs fn
// in the caller's namespace, on a locked thread too). fn must not start
// goroutines that expect to be in the namespace.
func Do(name string, fn func() error) error {
	if name == "" {
		// No setns: a process without CAP_SYS_ADMIN (a docker node) may
		// not enter even its own namespace.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		return fn()
	}
	target, err := Open(name)
	if err != nil {
		return err
	}
	defer target.Close()
	var ferr error
	err = onThread(func() (bool, error) {
		orig, err := vns.Get()
		if err != nil {
			return true, fmt.Errorf("get current netns: %w", err)
		}
		defer orig.Close()
		if err := vns.Set(target); err != nil {
			return true, fmt.Errorf("enter netns %s: %w", name, err)
		}
		ferr = fn()
		return vns.Set(orig) == nil, nil
	})
	if err != nil {
		return err
	}
	return ferr
}

// doDiscard runs fn on a locked thread of its own in the named namespace
// ("" = the caller's) and lets the thread die with it, whatever fn did to
// it.
func doDiscard(name string, fn func() error) error {
	var target vns.NsHandle = vns.None()
	if name != "" {
		t, err := Open(name)
		if err != nil {
			return err
		}
		defer t.Close()
		target = t
	}
	var ferr error
	err := onThread(func() (bool, error) {
		if name != "" {
			if err := vns.Set(target); err != nil {
				return false, fmt.Errorf("enter netns %s: %w", name, err)
			}
		}
		ferr = fn()
		return false, nil
	})
	if err != nil {
		return err
	}
	return ferr
}

// Handle returns a netlink handle bound to the named namespace ("" = the
// caller's). It can be used from any goroutine; the caller closes it.
func Handle(name string) (*netlink.Handle, error) {
	if name == "" {
		return netlink.NewHandle()
	}
	h, err := Open(name)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	nh, err := netlink.NewHandleAt(h)
	if err != nil {
		return nil, fmt.Errorf("netlink handle in netns %s: %w", name, err)
	}
	return nh, nil
}

// Start starts cmd inside the named namespace, in a process group of its
// own, and returns its identity. The caller still owns cmd (Wait on it).
func Start(name string, cmd *exec.Cmd) (proc.Process, error) {
	return StartPrepared(name, cmd, nil)
}

// StartPrepared is Start with prepare (if not nil) run first on the
// thread that starts cmd, inside the namespace: the thread is thrown
// away afterwards, so prepare may move it into namespaces of its own
// (a mount namespace), which cmd inherits.
func StartPrepared(name string, cmd *exec.Cmd, prepare func() error) (proc.Process, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	var err error
	if prepare == nil {
		err = Do(name, cmd.Start)
	} else {
		err = doDiscard(name, func() error {
			if err := prepare(); err != nil {
				return err
			}
			return cmd.Start()
		})
	}
	if err != nil {
		return proc.Process{}, fmt.Errorf("start %s in netns %s: %w", cmd.Path, name, err)
	}
	p, err := proc.Lookup(cmd.Process.Pid)
	if err != nil {
		// It exited already; report its PID with no start time.
		return proc.Process{PID: cmd.Process.Pid}, nil
	}
	return p, nil
}
