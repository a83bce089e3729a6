//go:build !linux

package docker

import (
	"context"
	"errors"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
)

var errUnsupported = errors.New("docker runtime: exec in a network namespace is only implemented on Linux")

func inContainer(pid int, name string) bool { return false }

// ExecHost runs argv in the network namespace at nsPath; Linux only.
func ExecHost(ctx context.Context, nsPath string, argv []string, stdio sandbox.Stdio) (int, error) {
	return -1, errUnsupported
}
