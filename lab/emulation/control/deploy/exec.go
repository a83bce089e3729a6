package deploy

import (
	"context"
	"fmt"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
)

// Exec runs argv inside node of lab (lab "": the only lab that has such a
// node) under root, with stdio attached, and returns its exit code. In a
// docker lab, a command the node image lacks (all but /rocelab) runs from
// the host inside the container's network namespace (docker.Runtime.Exec).
func Exec(ctx context.Context, root, lab, nodeName string, argv []string, stdio sandbox.Stdio) (int, error) {
	l, n, err := FindNode(root, lab, nodeName)
	if err != nil {
		return -1, err
	}
	if l.Runtime == RuntimeMachines {
		return -1, fmt.Errorf("exec in %s: %w", nodeName, ErrSpansMachines)
	}
	rt, release, err := openRuntime(l.Runtime)
	if err != nil {
		return -1, fmt.Errorf("exec: %w", err)
	}
	defer release()
	stdio.Env = append(stdio.Env, verbsEnv(n)...)
	if stdio.Prepare == nil {
		stdio.Prepare = verbsHostView(l, n)
	}
	return rt.Exec(ctx, nodeRef(rt, l, n), argv, stdio)
}
