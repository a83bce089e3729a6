package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
)

// Exec runs argv in the node and returns its exit code. In a node whose
// container is the user's, it always runs there (docker exec). In the
// lab's own image, if argv[0] exists in the container's file system it
// runs there; otherwise the host's argv[0] (looked up in the host's PATH)
// runs in the container's network namespace. See the package
// documentation.
func (r *Runtime) Exec(ctx context.Context, ref sandbox.Ref, argv []string, stdio sandbox.Stdio) (int, error) {
	if len(argv) == 0 {
		return -1, errors.New("exec: empty command")
	}
	node, err := r.Inspect(ctx, ref)
	if err != nil {
		return -1, fmt.Errorf("exec in %s: %w", ref.Node, err)
	}
	// A user's image is the node: commands run there, as in any container.
	if node.Image != "" || inContainer(node.Process.PID, argv[0]) {
		return r.ExecContainer(ctx, node.Ref, argv, stdio)
	}
	return ExecHost(ctx, node.NetNSPath, argv, stdio)
}

// ExecContainer runs argv inside the container (docker exec), with the
// container's file system and capabilities, and returns its exit code.
func (r *Runtime) ExecContainer(ctx context.Context, ref sandbox.Ref, argv []string, stdio sandbox.Stdio) (int, error) {
	opts := container.ExecOptions{
		Cmd:          argv,
		Env:          stdio.Env,
		AttachStdin:  stdio.In != nil,
		AttachStdout: true,
		AttachStderr: true,
	}
	created, err := r.c.ContainerExecCreate(ctx, ref.ID, opts)
	if err != nil {
		return -1, fmt.Errorf("exec %s in container %s: %w", argv[0], ref.ID, err)
	}
	att, err := r.c.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		return -1, fmt.Errorf("exec %s in container %s: attach: %w", argv[0], ref.ID, err)
	}
	defer att.Close()
	if stdio.In != nil {
		go func() {
			io.Copy(att.Conn, stdio.In)
			att.CloseWrite()
		}()
	}
	out, errw := orDiscard(stdio.Out), orDiscard(stdio.Err)
	done := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(out, errw, att.Reader)
		done <- err
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		att.Close()
		return -1, fmt.Errorf("exec %s in container %s: %w", argv[0], ref.ID, ctx.Err())
	}
	if err != nil {
		return -1, fmt.Errorf("exec %s in container %s: output: %w", argv[0], ref.ID, err)
	}
	// The engine records the exit code just after the output closes.
	for sleep := time.Millisecond; ; sleep = min(2*sleep, 100*time.Millisecond) {
		ins, err := r.c.ContainerExecInspect(ctx, created.ID)
		if err != nil {
			return -1, fmt.Errorf("exec %s in container %s: %w", argv[0], ref.ID, err)
		}
		if !ins.Running {
			return ins.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("exec %s in container %s: %w", argv[0], ref.ID, ctx.Err())
		case <-time.After(sleep):
		}
	}
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
