package docker

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
)

// ErrNoImage is returned (wrapped) for a user image that is not present
// on the machine: labs work offline, nothing is pulled.
var ErrNoImage = errors.New("image is not present locally")

// HasImage checks that image is present on the machine, and returns an
// error wrapping ErrNoImage, which says how to get it there, if not.
func (r *Runtime) HasImage(ctx context.Context, image string) error {
	_, err := r.c.ImageInspect(ctx, image)
	if client.IsErrNotFound(err) {
		return fmt.Errorf("%w: %s (nothing is pulled, labs work offline: docker pull, build or load it first)", ErrNoImage, image)
	}
	if err != nil {
		return fmt.Errorf("inspect image %s: %w", image, err)
	}
	return nil
}

// createUser creates a node whose container is the user's: the user
// container (role user, named ContainerName) starts first, with no
// network, the spec's hostname and /etc/hosts entries and Docker's default
// capabilities; it owns the node's network namespace. The node process,
// if spec.Argv is set, runs in a sidecar of the lab's image (role sidecar,
// SidecarName) that joins that namespace (network mode container:ID), with
// the same capabilities and run-directory bind as any node container. The
// Node's NetNSPath is the user container's; its Process is the sidecar's.
func (r *Runtime) createUser(ctx context.Context, spec sandbox.NodeSpec) (sandbox.Node, error) {
	u := spec.User
	if err := r.HasImage(ctx, u.Image); err != nil {
		return sandbox.Node{}, fmt.Errorf("create docker node %s: %w", spec.Node, err)
	}
	var side *container.Config
	var sideHost *container.HostConfig
	if len(spec.Argv) > 0 {
		// Build (or find) the node image before anything is created.
		var err error
		if side, sideHost, err = r.nodeConfig(ctx, spec, RoleSidecar); err != nil {
			return sandbox.Node{}, err
		}
	}
	cfg := &container.Config{
		Image:    u.Image,
		Hostname: u.Hostname,
		Env:      slices.Clone(u.Env),
		Labels:   labels(spec, RoleUser),
	}
	if len(u.Cmd) > 0 {
		cfg.Cmd = slices.Clone(u.Cmd)
	}
	host := &container.HostConfig{
		NetworkMode: "none",
		Binds:       slices.Clone(u.Binds),
		ExtraHosts:  slices.Clone(u.Hosts),
		LogConfig:   container.LogConfig{Type: "json-file"},
	}
	name := ContainerName(spec.Lab, spec.Node)
	node, err := r.run(ctx, spec, name, cfg, host)
	if errors.Is(err, ErrNotRunning) {
		return sandbox.Node{}, userEnded(u.Image, err)
	}
	if err != nil {
		return sandbox.Node{}, err
	}
	if side == nil {
		return node, nil
	}
	return r.addSidecar(ctx, spec, node, side, sideHost)
}

// addSidecar runs the node process's sidecar in the network namespace of
// the user container node, and removes node if that fails. A user
// command that ends at once may end after its start was seen and before
// the sidecar joins it; the engine then refuses the join ("cannot join
// network of a non running container"), and the user container's exit
// and output, not the refusal, are what the error reports.
func (r *Runtime) addSidecar(ctx context.Context, spec sandbox.NodeSpec, node sandbox.Node, side *container.Config, sideHost *container.HostConfig) (sandbox.Node, error) {
	name := ContainerName(spec.Lab, spec.Node)
	sideHost.NetworkMode = container.NetworkMode("container:" + node.Ref.ID)
	sn, err := r.run(ctx, spec, SidecarName(spec.Lab, spec.Node), side, sideHost)
	if err != nil {
		if _, ierr := r.Inspect(ctx, node.Ref); errors.Is(ierr, ErrNotRunning) {
			err = userEnded(spec.User.Image, fmt.Errorf("start container %s: %w", name, r.withOutput(ctx, node.Ref, ierr)))
		}
		return sandbox.Node{}, r.rollback(ctx, err, node.Ref)
	}
	node.Process = sn.Process
	return node, nil
}

// userEnded says that the user container of image ended when it had to
// keep running.
func userEnded(image string, err error) error {
	return fmt.Errorf("image %s: its command ended, and it must keep running (give the node a cmd): %w", image, err)
}
