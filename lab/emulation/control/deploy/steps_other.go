//go:build !linux

package deploy

import (
	"context"
	"errors"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/topologies"
)

var errUnsupported = errors.New("deploy: only implemented on Linux")

func netnsRuntime() sandbox.Runtime { return &netns.Runtime{} }

func (d *deployer) recordNodes() ([]int, error)                 { return nil, errUnsupported }
func (d *deployer) createNode(n *topologies.Node, id int) error { return errUnsupported }
func (d *deployer) recordLinks() error                          { return errUnsupported }
func (d *deployer) createLink(l *topologies.Link) error         { return errUnsupported }
func (d *deployer) linksUp() error                              { return errUnsupported }
func (d *deployer) address(n *topologies.Node) error            { return errUnsupported }

func teardown(l *state.Lab, grace time.Duration) {}

func (d *deployer) createContainer(ctx context.Context, n *topologies.Node) error {
	return errUnsupported
}
func feedConfig(path string, b []byte) error        { return errUnsupported }
func (d *deployer) containerLog(node string) string { return "" }
func (d *deployer) logOf(node, id string) string    { return "" }
func removeContainers(ctx context.Context, l *state.Lab) ([]string, error) {
	return nil, nil
}
func removeLeftoverContainers(ctx context.Context, root string, match func(lab string) bool, required bool) ([]string, error) {
	return nil, nil
}

func removeNodeImages(ctx context.Context) ([]string, error) { return nil, nil }
