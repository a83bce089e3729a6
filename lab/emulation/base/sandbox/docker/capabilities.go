package docker

import (
	"context"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
)

// The docker runtime offers every optional capability of a runtime.
var (
	_ sandbox.ContainerNodes = (*Runtime)(nil)
	_ sandbox.Observer       = (*Runtime)(nil)
	_ sandbox.Images         = (*Runtime)(nil)
)

// NodeArgv is `/rocelab node --config cfg`: the binary in the node image.
func (r *Runtime) NodeArgv(cfg string) []string {
	return []string{BinaryPath, "node", "--config", cfg}
}

// ContainerNames are the node's container and, with sidecar, its sidecar.
func (r *Runtime) ContainerNames(lab, node string, sidecar bool) []string {
	if sidecar {
		return []string{ContainerName(lab, node), SidecarName(lab, node)}
	}
	return []string{ContainerName(lab, node)}
}

// Running is Inspect's verdict: nil while the container runs, else its
// state and exit code, wrapping sandbox.ErrNotRunning.
func (r *Runtime) Running(ctx context.Context, ref sandbox.Ref) error {
	_, err := r.Inspect(ctx, ref)
	return err
}

// PrepareNodeImage builds the lab's node image unless it is there.
func (r *Runtime) PrepareNodeImage(ctx context.Context) error {
	_, err := r.EnsureImage(ctx)
	return err
}
