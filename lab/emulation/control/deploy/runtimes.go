package deploy

import (
	"fmt"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/docker"
)

// openRuntime returns the runtime a deployed lab's books name (Lab.Runtime)
// and a func that releases it. It is the one place deploy maps a name to a
// runtime: everything else asks a runtime for the optional capabilities it
// needs (sandbox.ContainerNodes, Observer, Images), so another runtime is
// a case here plus the capabilities it implements. (The sweeps of
// containers by label, containers_linux.go, are the docker engine's own.)
func openRuntime(name string) (sandbox.Runtime, func(), error) {
	switch name {
	case "netns":
		return netnsRuntime(), func() {}, nil
	case docker.Name:
		rt, err := docker.New(docker.Options{})
		if err != nil {
			return nil, nil, err
		}
		return rt, func() { rt.Close() }, nil
	}
	return nil, nil, fmt.Errorf("unknown runtime %q (this rocelab knows netns and docker)", name)
}

// nodeRef names node n of lab l to its runtime rt: its container, for a
// runtime whose nodes are containers, else its named namespace.
func nodeRef(rt sandbox.Runtime, l *Lab, n *Node) sandbox.Ref {
	id := n.NetNS
	if _, ok := rt.(sandbox.ContainerNodes); ok {
		id = n.Container
	}
	return sandbox.Ref{Runtime: rt.Name(), Lab: l.Name, Node: n.Name, ID: id}
}
