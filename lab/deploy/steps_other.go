//go:build !linux

package deploy

import (
	"errors"
	"time"

	"github.com/rocelab/rocelab/lab/runtime"
	"github.com/rocelab/rocelab/lab/runtime/netns"
	"github.com/rocelab/rocelab/lab/state"
	"github.com/rocelab/rocelab/topologies"
)

var errUnsupported = errors.New("deploy: only implemented on Linux")

func netnsRuntime() runtime.Runtime { return &netns.Runtime{} }

func (d *deployer) createNode(n *topologies.Node) error { return errUnsupported }
func (d *deployer) createLink(l *topologies.Link) error { return errUnsupported }
func (d *deployer) address(n *topologies.Node) error    { return errUnsupported }

func teardown(l *state.Lab, grace time.Duration) {}
