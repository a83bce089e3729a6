package deploy

import (
	"fmt"

	"github.com/rocelab/rocelab/lab/emulation/runtime"
	"github.com/rocelab/rocelab/lab/emulation/runtime/docker"
)

// openRuntime returns the runtime a deployed lab's books name (Lab.Runtime)
// and a func that releases it. It is the one place deploy maps a name to a
// runtime: everything else asks a runtime for the optional capabilities it
// needs (runtime.ContainerNodes, Observer, Images), so another runtime is
// a case here plus the capabilities it implements. (The sweeps of
// containers by label, containers_linux.go, are the docker engine's own.)
func openRuntime(name string) (runtime.Runtime, func(), error) {
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
func nodeRef(rt runtime.Runtime, l *Lab, n *Node) runtime.Ref {
	id := n.NetNS
	if _, ok := rt.(runtime.ContainerNodes); ok {
		id = n.Container
	}
	return runtime.Ref{Runtime: rt.Name(), Lab: l.Name, Node: n.Name, ID: id}
}
