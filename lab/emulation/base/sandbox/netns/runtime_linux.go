package netns

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"golang.org/x/sys/unix"
)

// Runtime is the netns node runtime: one named namespace per node
// (state.NetnsName), its loopback tagged rocelab:<lab>:<node>:lo, and the
// node process started inside it.
type Runtime struct {
	// Executables are the programs whose processes Remove stops inside a
	// node's namespace (default: this program and the rocelab-node beside
	// it). Other processes there — a user's `ip netns exec` shell — are
	// left alone.
	Executables []string
	// Grace is the time between SIGTERM and SIGKILL (default 2 s).
	Grace time.Duration
}

var _ sandbox.Runtime = (*Runtime)(nil)

// Name is "netns".
func (r *Runtime) Name() string { return "netns" }

// Create makes the node's namespace, tags it and starts spec.Argv in it
// with stdout and stderr appended to spec.Log. On error nothing is left.
func (r *Runtime) Create(ctx context.Context, spec sandbox.NodeSpec) (node sandbox.Node, err error) {
	if len(spec.Argv) == 0 {
		return node, fmt.Errorf("create node %s: empty command", spec.Node)
	}
	name := state.NetnsName(spec.Lab, spec.Node)
	ref := sandbox.Ref{Runtime: r.Name(), Lab: spec.Lab, Node: spec.Node, ID: name}
	if err := Create(name); err != nil {
		return node, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.Remove(context.WithoutCancel(ctx), ref))
		}
	}()
	h, err := Handle(name)
	if err != nil {
		return node, err
	}
	lo, err := h.LinkByName("lo")
	if err == nil {
		err = h.LinkSetAlias(lo, state.IfAlias(spec.Lab, spec.Node, state.LoPort))
	}
	h.Close()
	if err != nil {
		return node, fmt.Errorf("tag netns %s: %w", name, err)
	}
	cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
	cmd.Dir = spec.RunDir
	if spec.Log != "" {
		f, err := os.OpenFile(spec.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return node, fmt.Errorf("create node %s: %w", spec.Node, err)
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = f, f
	}
	p, err := Start(name, cmd)
	if err != nil {
		return node, err
	}
	// The node outlives this call; reap it if it exits while we run.
	go cmd.Wait()
	return sandbox.Node{Ref: ref, NetNSPath: Path(name), Process: p}, nil
}

// Remove stops the node's processes (those running one of Executables;
// default this program and the rocelab-node beside it) and deletes its
// namespace.
func (r *Runtime) Remove(ctx context.Context, ref sandbox.Ref) error {
	exes := r.Executables
	if exes == nil {
		if exe, err := os.Executable(); err == nil {
			exes = []string{exe, state.NodeExecutable(exe)}
		}
	}
	grace := r.Grace
	if grace == 0 {
		grace = 2 * time.Second
	}
	var errs []error
	for _, p := range Processes(ref.ID, exes) {
		errs = append(errs, p.Stop(grace))
	}
	errs = append(errs, Delete(ref.ID))
	return errors.Join(errs...)
}

// Exec runs argv inside the node's namespace and returns its exit code.
func (r *Runtime) Exec(ctx context.Context, ref sandbox.Ref, argv []string, stdio sandbox.Stdio) (int, error) {
	if len(argv) == 0 {
		return -1, errors.New("exec: empty command")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio.In, stdio.Out, stdio.Err
	if len(stdio.Env) > 0 {
		cmd.Env = append(os.Environ(), stdio.Env...)
	}
	if _, err := StartPrepared(ref.ID, cmd, stdio.Prepare); err != nil {
		return -1, err
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return -1, err
	}
	return 0, nil
}

// Leftovers lists the namespaces tagged as nodes of lab ("" = any lab)
// whose names are the ones state.NetnsName gives those nodes.
func (r *Runtime) Leftovers(ctx context.Context, lab string) ([]sandbox.Ref, error) {
	names, err := List()
	if err != nil {
		return nil, err
	}
	var refs []sandbox.Ref
	for _, name := range names {
		if !strings.HasPrefix(name, state.NetnsPrefix) {
			continue
		}
		l, node, ok := Tag(name)
		if !ok || (lab != "" && l != lab) || state.NetnsName(l, node) != name {
			continue
		}
		refs = append(refs, sandbox.Ref{Runtime: r.Name(), Lab: l, Node: node, ID: name})
	}
	return refs, nil
}

// Tag reads the lab tag on the loopback of namespace name.
func Tag(name string) (lab, node string, ok bool) {
	h, err := Handle(name)
	if err != nil {
		return "", "", false
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil {
		return "", "", false
	}
	lab, node, port, ok := state.ParseAlias(lo.Attrs().Alias)
	if !ok || port != state.LoPort {
		return "", "", false
	}
	return lab, node, true
}

// Processes returns the processes inside namespace name that run one of
// exes (nil: any). Symbolic links in exes are resolved.
func Processes(name string, exes []string) []proc.Process {
	var st unix.Stat_t
	if !Exists(name) || unix.Stat(Path(name), &st) != nil {
		return nil
	}
	want := map[string]bool{}
	for _, e := range exes {
		if r, err := filepath.EvalSymlinks(e); err == nil {
			e = r
		}
		want[e] = true
	}
	ents, _ := os.ReadDir("/proc")
	var out []proc.Process
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		var pst unix.Stat_t
		if unix.Stat(filepath.Join("/proc", e.Name(), "ns/net"), &pst) != nil || pst.Ino != st.Ino || pst.Dev != st.Dev {
			continue
		}
		if exes != nil {
			path, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
			if err != nil || !want[strings.TrimSuffix(path, " (deleted)")] {
				continue
			}
		}
		if p, err := proc.Lookup(pid); err == nil {
			out = append(out, p)
		}
	}
	return out
}
