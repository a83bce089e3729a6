package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/lifecycle"
	"github.com/rocelab/rocelab/topologies"
)

// createContainer creates node n as a Docker container and gives its
// network namespace a name, so that every later step (links, addresses,
// exec) works as with the netns runtime:
//
//  1. NODE.json becomes a FIFO, and the node process's command is
//     `/rocelab node --config NODE.json`: it blocks reading its config
//     until start writes it, after the links exist (the node opens its
//     AF_PACKET sockets as soon as it has read its config);
//  2. the container is recorded (KindContainer, its name) and created.
//     A node with an image of its own (Topology Node.Container) is the
//     user's container, and its node process, if it has one, runs in a
//     sidecar container in the user container's network namespace: both
//     are recorded before either is created;
//  3. its /proc/PID/ns/net is bind-mounted as the named namespace
//     rl-<lab>-<node> (recorded as KindNetns first), and its loopback is
//     tagged like a netns node's, so that sweeps find it.
func (d *deployer) createContainer(ctx context.Context, n *topologies.Node) error {
	rt, ok := d.rt.(sandbox.ContainerNodes)
	if !ok {
		return fmt.Errorf("runtime %s does not run nodes in containers", d.rt.Name())
	}
	name := state.NetnsName(d.name, n.Name)
	if netns.Exists(name) {
		return fmt.Errorf("namespace %s exists already (a leftover? rocelab destroy --all)", name)
	}
	spec := sandbox.NodeSpec{Lab: d.name, Node: n.Name, RunDir: state.Dir(d.root, d.name)}
	cfg := d.path(n.Name, ".json")
	if n.Container == nil || runsProcess(n) {
		os.Remove(cfg)
		if err := unix.Mkfifo(cfg, 0o600); err != nil {
			return fmt.Errorf("config fifo %s: %w", cfg, err)
		}
		spec.Argv = rt.NodeArgv(cfg)
	}
	if n.Container != nil {
		spec.User = d.userContainer(n)
	}
	names := rt.ContainerNames(d.name, n.Name, n.Container != nil && spec.Argv != nil)
	var ids []int
	for _, cname := range names {
		id, err := d.intend(state.Object{Kind: state.KindContainer, Node: n.Name, Name: cname})
		if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	node, err := d.rt.Create(ctx, spec)
	if err != nil {
		return err
	}
	// The last container runs the node's process (or is the user's, with
	// none): it carries the PID.
	for i, id := range ids {
		var update func(*state.Object)
		if i == len(ids)-1 {
			update = func(o *state.Object) { o.PID, o.StartTime = node.Process.PID, node.Process.StartTime }
		}
		if err := d.created(id, update); err != nil {
			return err
		}
	}
	nsID, err := d.intend(state.Object{Kind: state.KindNetns, Node: n.Name, Name: name})
	if err != nil {
		return err
	}
	if err := bindNetns(node.NetNSPath, name); err != nil {
		// A user command that ends at once takes the namespace with it
		// before it is named: how it ended is the cause to report.
		if n.Container != nil {
			if serr := d.userStopped(ctx, n, node.Ref); errors.Is(serr, sandbox.ErrNotRunning) {
				return fmt.Errorf("user container %w", serr)
			}
		}
		return err
	}
	if err := lifecycle.TagNetns(d.name, n.Name, name); err != nil {
		return err
	}
	d.mu.Lock()
	d.ns[n.Name] = name
	d.containers[n.Name] = node
	nd := d.nodes[n.Name]
	nd.Container = names[0]
	if n.Container != nil {
		nd.Image = n.Container.Image
		if len(names) > 1 {
			nd.Sidecar = names[1]
		}
	}
	d.mu.Unlock()
	return d.created(nsID, nil)
}

// bindNetns makes the namespace file nsPath the named namespace name
// (/run/netns/NAME), as `ip netns attach` does.
func bindNetns(nsPath, name string) error {
	target := netns.Path(name)
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return fmt.Errorf("name netns %s: %w", name, err)
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o444)
	if err != nil {
		return fmt.Errorf("name netns %s: %w", name, err)
	}
	f.Close()
	if err := unix.Mount(nsPath, target, "none", unix.MS_BIND, ""); err != nil {
		os.Remove(target)
		return fmt.Errorf("name netns %s: bind %s: %w", name, nsPath, err)
	}
	return nil
}

// feedTimeout bounds how long a docker node's process may take to start
// reading its config FIFO.
const feedTimeout = 20 * time.Second

// feedConfig hands a docker node its config: the JSON goes through the
// FIFO NODE.json the node is blocked on, then a regular file replaces the
// FIFO (for people and inspect). It fails if nobody reads the FIFO (the
// container's process died).
func feedConfig(path string, b []byte) error {
	// A container counts as started before its process has reached the
	// open of the FIFO; on a loaded machine that takes a while, so wait
	// for a reader (ENXIO means none yet) up to feedTimeout.
	deadline := time.Now().Add(feedTimeout)
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	for errors.Is(err, unix.ENXIO) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		fd, err = unix.Open(path, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	}
	if errors.Is(err, unix.ENXIO) {
		return fmt.Errorf("config fifo %s: the node process did not open it within %v (did its container exit?)", path, feedTimeout)
	}
	if err != nil {
		return fmt.Errorf("config fifo %s: %w", path, err)
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return fmt.Errorf("config fifo %s: %w", path, err)
	}
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			unix.Close(fd)
			return fmt.Errorf("config fifo %s: %w", path, err)
		}
		b = b[n:]
	}
	return unix.Close(fd)
}

// releaseFIFO ends the wait of a docker node that never got its config
// (a host without a process, a failed deploy): opening and closing the
// FIFO gives it end-of-file, and it exits at once instead of waiting for
// the stop timeout. A regular file or no file is left alone.
func releaseFIFO(path string) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	if fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
		unix.Close(fd)
	}
}

// containerLog is the output so far of the container that runs node's
// process (its sidecar, when the node's container is the user's), for an
// error.
func (d *deployer) containerLog(node string) string {
	rt, ok := d.rt.(sandbox.ContainerNodes)
	if !ok {
		return ""
	}
	name := rt.ContainerNames(d.name, node, false)[0]
	d.mu.Lock()
	if nd := d.nodes[node]; nd != nil && nd.Sidecar != "" {
		name = nd.Sidecar
	}
	d.mu.Unlock()
	return d.logOf(node, name)
}

// logOf is the output so far of node's container id (or name), for an
// error.
func (d *deployer) logOf(node, id string) string {
	rt, ok := d.rt.(sandbox.Observer)
	if !ok {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var buf bytes.Buffer
	ref := sandbox.Ref{Runtime: d.rt.Name(), Lab: d.name, Node: node, ID: id}
	if err := rt.Logs(ctx, ref, &buf); err != nil || len(bytes.TrimSpace(buf.Bytes())) == 0 {
		return ""
	}
	return "; container output:\n  " + string(bytes.ReplaceAll(bytes.TrimSpace(tailBytes(buf.Bytes(), 2048)), []byte("\n"), []byte("\n  ")))
}

func tailBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
