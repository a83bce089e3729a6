package deploy

import (
	"context"
	"fmt"

	"github.com/rocelab/rocelab/lab/runtime"
)

// Exec runs argv inside node of lab (lab "": the only lab that has such a
// node) under root, with stdio attached, and returns its exit code.
func Exec(ctx context.Context, root, lab, nodeName string, argv []string, stdio runtime.Stdio) (int, error) {
	l, n, err := FindNode(root, lab, nodeName)
	if err != nil {
		return -1, err
	}
	if l.Runtime != "netns" {
		return -1, fmt.Errorf("exec: runtime %s is not supported yet", l.Runtime)
	}
	ref := runtime.Ref{Runtime: l.Runtime, Lab: l.Name, Node: n.Name, ID: n.NetNS}
	return netnsRuntime().Exec(ctx, ref, argv, stdio)
}
