package docker

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
)

// Name is the runtime's name, in Ref.Runtime.
const Name = "docker"

// DefaultStopTimeout is how long Remove waits after SIGTERM before the
// engine kills the container.
const DefaultStopTimeout = 2 * time.Second

// Options configure a Runtime.
type Options struct {
	// Binary is the static rocelab binary put into the node image. ""
	// means the running executable (os.Executable), which then must be
	// static.
	Binary string
	// Client talks to the Docker engine. nil means a client made from the
	// environment (DOCKER_HOST, …, default /var/run/docker.sock) with API
	// version negotiation; Close closes only a client the Runtime made.
	Client client.APIClient
	// StopTimeout is the grace Remove gives a container before it is
	// killed; 0 means DefaultStopTimeout.
	StopTimeout time.Duration
}

// Runtime creates nodes as Docker containers. It is safe for concurrent
// use.
type Runtime struct {
	c           client.APIClient
	ownClient   bool
	binary      string
	stopTimeout time.Duration

	mu    sync.Mutex
	image Image // the node image, once EnsureImage succeeded
}

var _ sandbox.Runtime = (*Runtime)(nil)

// New returns a docker runtime. It does not contact the engine; Ping does.
func New(opts Options) (*Runtime, error) {
	r := &Runtime{c: opts.Client, binary: opts.Binary, stopTimeout: opts.StopTimeout}
	if r.stopTimeout <= 0 {
		r.stopTimeout = DefaultStopTimeout
	}
	if r.binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("docker runtime: find own executable: %w", err)
		}
		r.binary = exe
	}
	if r.c == nil {
		c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
		if err != nil {
			return nil, fmt.Errorf("docker runtime: engine client: %w", err)
		}
		r.c, r.ownClient = c, true
	}
	return r, nil
}

// Close releases the engine client if the Runtime made it.
func (r *Runtime) Close() error {
	if r.ownClient {
		return r.c.Close()
	}
	return nil
}

// Name returns "docker".
func (r *Runtime) Name() string { return Name }

// Ping checks that the Docker engine answers.
func (r *Runtime) Ping(ctx context.Context) error {
	if _, err := r.c.Ping(ctx); err != nil {
		return fmt.Errorf("docker engine: %w", err)
	}
	return nil
}

// EnsureImage builds the node image from the binary unless it exists, and
// returns it. Create calls it; calling it first separates the (slow, once
// per binary) build from node creation.
func (r *Runtime) EnsureImage(ctx context.Context) (Image, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.image.Ref != "" {
		return Image{Ref: r.image.Ref, Hash: r.image.Hash}, nil
	}
	img, err := ensureImage(ctx, r.c, r.binary)
	if err != nil {
		return Image{}, err
	}
	r.image = img
	return img, nil
}

func checkSpec(spec sandbox.NodeSpec) error {
	if err := state.ValidName(spec.Lab); err != nil {
		return err
	}
	switch {
	case spec.Node == "":
		return errors.New("empty node name")
	case len(spec.Argv) == 0 && spec.User == nil:
		return errors.New("empty command")
	case spec.User != nil && spec.User.Image == "":
		return errors.New("user container without an image")
	case spec.RunDir == "" || !filepath.IsAbs(spec.RunDir):
		return fmt.Errorf("run directory %q is not an absolute path", spec.RunDir)
	}
	return nil
}

// Create creates and starts the node's container and returns it once its
// process runs. A container that cannot be started, or whose process
// exits at once, is removed again and its log is part of the error.
func (r *Runtime) Create(ctx context.Context, spec sandbox.NodeSpec) (sandbox.Node, error) {
	if err := checkSpec(spec); err != nil {
		return sandbox.Node{}, fmt.Errorf("create docker node: %w", err)
	}
	if spec.User != nil {
		return r.createUser(ctx, spec)
	}
	name := ContainerName(spec.Lab, spec.Node)
	cfg, host, err := r.nodeConfig(ctx, spec, RoleNode)
	if err != nil {
		return sandbox.Node{}, err
	}
	host.NetworkMode = "none"
	return r.run(ctx, spec, name, cfg, host)
}

// nodeConfig is the container config of the lab's own node image running
// spec.Argv, labelled with role.
func (r *Runtime) nodeConfig(ctx context.Context, spec sandbox.NodeSpec, role string) (*container.Config, *container.HostConfig, error) {
	img, err := r.EnsureImage(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("create docker node %s: %w", spec.Node, err)
	}
	cfg := &container.Config{
		Image:      img.Ref,
		Cmd:        slices.Clone(spec.Argv),
		Entrypoint: []string{},
		Labels:     labels(spec, role),
	}
	host := &container.HostConfig{
		CapDrop:   []string{"ALL"},
		CapAdd:    []string{"NET_ADMIN", "NET_RAW"},
		Binds:     []string{spec.RunDir + ":" + spec.RunDir},
		LogConfig: container.LogConfig{Type: "json-file"},
	}
	return cfg, host, nil
}

func labels(spec sandbox.NodeSpec, role string) map[string]string {
	return map[string]string{LabelLab: spec.Lab, LabelNode: spec.Node, LabelRole: role}
}

// run creates and starts the container name and returns its node. A
// container that cannot be started, or whose process exits at once, is
// removed again and its log is part of the error.
func (r *Runtime) run(ctx context.Context, spec sandbox.NodeSpec, name string, cfg *container.Config, host *container.HostConfig) (sandbox.Node, error) {
	created, err := r.c.ContainerCreate(ctx, cfg, host, nil, nil, name)
	if err != nil {
		return sandbox.Node{}, fmt.Errorf("create container %s: %w", name, err)
	}
	ref := sandbox.Ref{Runtime: Name, Lab: spec.Lab, Node: spec.Node, ID: created.ID}
	node, err := r.start(ctx, ref, name)
	if err != nil {
		return sandbox.Node{}, r.rollback(ctx, err, ref)
	}
	return node, nil
}

// rollback removes refs after err, with a context of its own (ctx may be
// what failed), and returns err with any removal error joined.
func (r *Runtime) rollback(ctx context.Context, err error, refs ...sandbox.Ref) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.stopTimeout+10*time.Second)
	defer cancel()
	for _, ref := range refs {
		if rerr := r.Remove(rctx, ref); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// start starts the created container ref and waits until it has a PID.
func (r *Runtime) start(ctx context.Context, ref sandbox.Ref, name string) (sandbox.Node, error) {
	if err := r.c.ContainerStart(ctx, ref.ID, container.StartOptions{}); err != nil {
		return sandbox.Node{}, fmt.Errorf("start container %s: %w", name, err)
	}
	node, err := r.Inspect(ctx, ref)
	if err != nil {
		return sandbox.Node{}, fmt.Errorf("start container %s: %w", name, r.withOutput(ctx, ref, err))
	}
	return node, nil
}

// withOutput adds the last 2 KiB of the container's output, if it has
// any, to err.
func (r *Runtime) withOutput(ctx context.Context, ref sandbox.Ref, err error) error {
	var buf bytes.Buffer
	if lerr := r.Logs(ctx, ref, &buf); lerr == nil && buf.Len() > 0 {
		return fmt.Errorf("%w; its output:\n%s", err, tail(buf.Bytes(), 2048))
	}
	return err
}

// tail returns the last n bytes of b.
func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// Inspect returns the node of a running container: its network namespace
// and process. It fails if the container is not running.
func (r *Runtime) Inspect(ctx context.Context, ref sandbox.Ref) (sandbox.Node, error) {
	id := ref.ID
	if id == "" {
		id = ContainerName(ref.Lab, ref.Node)
	}
	ins, err := r.c.ContainerInspect(ctx, id)
	if err != nil {
		return sandbox.Node{}, fmt.Errorf("inspect container %s: %w", id, err)
	}
	if ins.Config == nil || ins.Config.Labels[LabelLab] == "" {
		return sandbox.Node{}, fmt.Errorf("container %s has no %s label: not a lab node", id, LabelLab)
	}
	if ins.State == nil || !ins.State.Running || ins.State.Pid <= 0 {
		return sandbox.Node{}, fmt.Errorf("container %s %w (%s)", id, ErrNotRunning, stateOf(ins.State))
	}
	p, err := proc.Lookup(ins.State.Pid)
	if err != nil {
		// It may have exited just now: the engine records the exit a
		// moment after the process is gone, so ask for a little while
		// and say how it ended.
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
			again, ierr := r.c.ContainerInspect(ctx, id)
			if ierr != nil || again.State == nil {
				break
			}
			if !again.State.Running {
				return sandbox.Node{}, fmt.Errorf("container %s %w (%s)", id, ErrNotRunning, stateOf(again.State))
			}
			select {
			case <-ctx.Done():
				return sandbox.Node{}, fmt.Errorf("container %s: %w", id, err)
			case <-time.After(20 * time.Millisecond):
			}
		}
		return sandbox.Node{}, fmt.Errorf("container %s: %w", id, err)
	}
	node := sandbox.Node{
		Ref: sandbox.Ref{
			Runtime: Name, Lab: ins.Config.Labels[LabelLab], Node: ins.Config.Labels[LabelNode], ID: ins.ID,
		},
		NetNSPath: "/proc/" + strconv.Itoa(p.PID) + "/ns/net",
		Process:   p,
	}
	if ins.Config.Labels[LabelRole] == RoleUser {
		node.Image = ins.Config.Image
	}
	return node, nil
}

// ErrNotRunning is returned (wrapped) by Inspect for a container that is
// not running.
var ErrNotRunning = sandbox.ErrNotRunning

// stateOf describes a container's state: "exited, exit code 3".
func stateOf(st *container.State) string {
	if st == nil {
		return "unknown"
	}
	s := st.Status + ", exit code " + strconv.Itoa(st.ExitCode)
	if st.OOMKilled {
		s += ", out of memory"
	}
	if st.Error != "" {
		s += ", " + st.Error
	}
	return s
}

// Logs copies the container's output so far (stdout and stderr) to w.
func (r *Runtime) Logs(ctx context.Context, ref sandbox.Ref, w io.Writer) error {
	rc, err := r.c.ContainerLogs(ctx, ref.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return fmt.Errorf("logs of container %s: %w", ref.ID, err)
	}
	defer rc.Close()
	if _, err := stdcopy.StdCopy(w, w, rc); err != nil {
		return fmt.Errorf("logs of container %s: %w", ref.ID, err)
	}
	return nil
}

// Remove stops the container (SIGTERM, then SIGKILL after the stop
// timeout) and deletes it. A container that is gone already is not an
// error; one without the lab label is refused.
func (r *Runtime) Remove(ctx context.Context, ref sandbox.Ref) error {
	id := ref.ID
	if id == "" {
		id = ContainerName(ref.Lab, ref.Node)
	}
	ins, err := r.c.ContainerInspect(ctx, id)
	if client.IsErrNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove container %s: %w", id, err)
	}
	if ins.Config == nil || ins.Config.Labels[LabelLab] == "" {
		return fmt.Errorf("remove container %s: it has no %s label, refusing to touch it", id, LabelLab)
	}
	if ref.Lab != "" && ins.Config.Labels[LabelLab] != ref.Lab {
		return fmt.Errorf("remove container %s: it belongs to lab %q, not %q", id, ins.Config.Labels[LabelLab], ref.Lab)
	}
	if ins.Config.Labels[LabelRole] == RoleUser {
		// The sidecar goes first: it lives in this container's namespace.
		lab, node := ins.Config.Labels[LabelLab], ins.Config.Labels[LabelNode]
		side := sandbox.Ref{Runtime: Name, Lab: lab, Node: node, ID: SidecarName(lab, node)}
		if err := r.Remove(ctx, side); err != nil {
			return err
		}
	}
	if ins.State != nil && ins.State.Running {
		secs := int((r.stopTimeout + time.Second - 1) / time.Second)
		if err := r.c.ContainerStop(ctx, ins.ID, container.StopOptions{Timeout: &secs}); err != nil && !client.IsErrNotFound(err) {
			return fmt.Errorf("stop container %s: %w", id, err)
		}
	}
	err = r.c.ContainerRemove(ctx, ins.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !client.IsErrNotFound(err) {
		return fmt.Errorf("remove container %s: %w", id, err)
	}
	return nil
}

// Leftovers lists the containers, running or not, labelled as belonging
// to lab (to any lab when lab is ""), sorted by lab and node.
func (r *Runtime) Leftovers(ctx context.Context, lab string) ([]sandbox.Ref, error) {
	sel := LabelLab
	if lab != "" {
		sel += "=" + lab
	}
	list, err := r.c.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", sel))})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	var refs []sandbox.Ref
	for _, c := range list {
		l := c.Labels[LabelLab]
		if l == "" || (lab != "" && l != lab) {
			continue
		}
		refs = append(refs, sandbox.Ref{Runtime: Name, Lab: l, Node: c.Labels[LabelNode], ID: c.ID})
	}
	slices.SortFunc(refs, func(a, b sandbox.Ref) int {
		return cmp.Or(strings.Compare(a.Lab, b.Lab), strings.Compare(a.Node, b.Node), strings.Compare(a.ID, b.ID))
	})
	return refs, nil
}
