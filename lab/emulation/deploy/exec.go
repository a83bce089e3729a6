package deploy

import (
	"context"
	"fmt"

	"github.com/rocelab/rocelab/lab/emulation/runtime"
	"github.com/rocelab/rocelab/lab/emulation/runtime/docker"
)

// Exec runs argv inside node of lab (lab "": the only lab that has such a
// node) under root, with stdio attached, and returns its exit code. In a
// docker lab, a command the node image lacks (all but /rocelab) runs from
// the host inside the container's network namespace (docker.Runtime.Exec).
func Exec(ctx context.Context, root, lab, nodeName string, argv []string, stdio runtime.Stdio) (int, error) {
	l, n, err := FindNode(root, lab, nodeName)
	if err != nil {
		return -1, err
	}
	switch l.Runtime {
	case "netns":
		ref := runtime.Ref{Runtime: l.Runtime, Lab: l.Name, Node: n.Name, ID: n.NetNS}
		return netnsRuntime().Exec(ctx, ref, argv, stdio)
	case docker.Name:
		rt, err := docker.New(docker.Options{})
		if err != nil {
			return -1, err
		}
		defer rt.Close()
		ref := runtime.Ref{Runtime: docker.Name, Lab: l.Name, Node: n.Name, ID: n.Container}
		return rt.Exec(ctx, ref, argv, stdio)
	}
	return -1, fmt.Errorf("exec: unknown runtime %q", l.Runtime)
}
