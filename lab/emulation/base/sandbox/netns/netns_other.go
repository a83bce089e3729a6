//go:build !linux

package netns

import (
	"context"
	"errors"
	"os/exec"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"

	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/proc"
)

// RunDir is where named namespaces are bind-mounted (as with iproute2).
const RunDir = "/run/netns"

var errUnsupported = errors.New("network namespaces are only implemented on Linux")

// Create creates the named namespace name.
func Create(name string) error { return errUnsupported }

// Exists reports whether the named namespace exists.
func Exists(name string) bool { return false }

// Delete removes the named namespace.
func Delete(name string) error { return errUnsupported }

// List returns the names of the named namespaces.
func List() ([]string, error) { return nil, errUnsupported }

// Do runs fn with the calling thread in the named namespace.
func Do(name string, fn func() error) error { return errUnsupported }

// Start starts cmd inside the named namespace.
func Start(name string, cmd *exec.Cmd) (proc.Process, error) { return proc.Process{}, errUnsupported }

// Runtime is the netns node runtime.
type Runtime struct {
	Executables []string
	Grace       time.Duration
}

// Name is "netns".
func (r *Runtime) Name() string { return "netns" }

// Create makes the node's namespace and starts its process.
func (r *Runtime) Create(ctx context.Context, spec sandbox.NodeSpec) (sandbox.Node, error) {
	return sandbox.Node{}, errUnsupported
}

// Remove stops the node's processes and deletes its namespace.
func (r *Runtime) Remove(ctx context.Context, ref sandbox.Ref) error { return errUnsupported }

// Exec runs argv inside the node's namespace.
func (r *Runtime) Exec(ctx context.Context, ref sandbox.Ref, argv []string, stdio sandbox.Stdio) (int, error) {
	return -1, errUnsupported
}

// Leftovers lists the namespaces tagged as nodes of lab.
func (r *Runtime) Leftovers(ctx context.Context, lab string) ([]sandbox.Ref, error) {
	return nil, errUnsupported
}

// StartPrepared needs Linux.
func StartPrepared(name string, cmd *exec.Cmd, prepare func() error) (proc.Process, error) {
	return proc.Process{}, errUnsupported
}
