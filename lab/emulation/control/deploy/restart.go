package deploy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
)

// RestartOptions tune Restart and Repair.
type RestartOptions struct {
	// HealthTimeout is how long the new process may take to answer
	// /health (default 30 s).
	HealthTimeout time.Duration
}

// Restart brings node of lab (lab "": the only lab that has it) back: it
// stops the node's process if it still runs, and starts a new one in the
// node's namespace with the configuration it was deployed with (the same
// ports, MACs, addresses and routes; faults added live are gone), records
// it in the lab's books before it starts, waits for its /health and
// updates the lab. A node of a group (Options.NodeGroups) comes back with
// its whole group, whose members share its process. The netns
// runtime only: a docker node's namespace dies with its process.
func Restart(ctx context.Context, root, lab, nodeName string, o RestartOptions) (*Node, error) {
	l, n, err := FindNode(root, lab, nodeName)
	if err != nil {
		return nil, err
	}
	if l.Runtime == RuntimeMachines {
		return nil, fmt.Errorf("restart %s: %w", nodeName, ErrSpansMachines)
	}
	books, err := state.Open(state.RootOr(root), l.Name, false)
	if errors.Is(err, state.ErrBusy) {
		return nil, fmt.Errorf("restart %s: lab %s: %w (a deploy or destroy of it is running)", nodeName, l.Name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("restart %s: %w", nodeName, err)
	}
	defer books.Close()
	// Read the lab again under its lock: another restart may have run.
	if l, err = readLab(root, l.Name); err != nil {
		return nil, fmt.Errorf("restart %s: %w", nodeName, err)
	}
	i := -1
	for k := range l.Nodes {
		if l.Nodes[k].Name == nodeName {
			i = k
		}
	}
	if i < 0 {
		return nil, fmt.Errorf("node %s: %w", nodeName, ErrNoNode)
	}
	n = &l.Nodes[i]
	if err := restartOne(ctx, l, books, n, o); err != nil {
		return nil, fmt.Errorf("restart %s: %w", nodeName, err)
	}
	if err := WriteRecord(l); err != nil {
		return nil, fmt.Errorf("restart %s: %w", nodeName, err)
	}
	return n, nil
}

// Repair restarts every node of lab (lab "": the only lab) whose process
// is dead or does not answer, and returns their names.
func Repair(ctx context.Context, root, lab string, o RestartOptions) ([]string, error) {
	l, err := PickLab(root, lab)
	if err != nil {
		return nil, err
	}
	if l.Runtime == RuntimeMachines {
		return nil, fmt.Errorf("repair lab %s: %w", l.Name, ErrSpansMachines)
	}
	books, err := state.Open(state.RootOr(root), l.Name, false)
	if errors.Is(err, state.ErrBusy) {
		return nil, fmt.Errorf("repair lab %s: %w (a deploy or destroy of it is running)", l.Name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("repair lab %s: %w", l.Name, err)
	}
	defer books.Close()
	if l, err = readLab(root, l.Name); err != nil {
		return nil, fmt.Errorf("repair: %w", err)
	}
	health(ctx, l)
	var fixed []string
	var errs []error
	restarted := map[string]bool{} // groups
	for i := range l.Nodes {
		n := &l.Nodes[i]
		if n.Alive() {
			continue
		}
		if n.Group != "" && restarted[n.Group] {
			fixed = append(fixed, n.Name)
			continue
		}
		restarted[n.Group] = n.Group != ""
		if err := restartOne(ctx, l, books, n, o); err != nil {
			errs = append(errs, fmt.Errorf("restart %s: %w", n.Name, err))
			continue
		}
		fixed = append(fixed, n.Name)
	}
	if len(fixed) > 0 {
		errs = append(errs, WriteRecord(l))
	}
	return fixed, errors.Join(errs...)
}

// restartOne stops n's process (if alive) and starts it again, under the
// lab's lock (books).
func restartOne(ctx context.Context, l *Lab, books *state.Lab, n *Node, o RestartOptions) error {
	if n.Socket == "" || n.Config == "" {
		return fmt.Errorf("node %s runs no node process", n.Name)
	}
	if l.Runtime != "netns" {
		return fmt.Errorf("runtime %s: a node's namespace died with its container; destroy and deploy the lab again", l.Runtime)
	}
	if !netns.Exists(n.NetNS) {
		return fmt.Errorf("namespace %s is gone; destroy and deploy the lab again", n.NetNS)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if old := processOf(n); n.PID != 0 && old.Alive() {
		if err := old.Stop(2 * time.Second); err != nil {
			return fmt.Errorf("stop %v: %w", old, err)
		}
	}
	// A node of a group comes back with its whole group: one process.
	members := []*Node{n}
	if n.Group != "" {
		members = groupOf(l, n.Group)
	}
	ns := members[0].NetNS
	var oldIDs []int
	var paths []string
	var objs []state.Object
	for _, m := range members {
		for _, obj := range books.Objects() {
			if obj.Kind == state.KindProcess && obj.Node == m.Name {
				oldIDs = append(oldIDs, obj.ID)
			}
		}
		objs = append(objs, state.Object{Kind: state.KindProcess, Node: m.Name, NetNS: ns, Name: state.NodeExecutable(l.Binary)})
		paths = append(paths, m.Config)
	}
	ids, err := books.IntendAll(objs)
	if err != nil {
		return err
	}
	banner := fmt.Sprintf("--- rocelab restart %s at %s", n.Name, time.Now().UTC().Format(time.RFC3339))
	pr, ready, err := startNode(l.Binary, paths, ns, l.Dir, n.Log, banner)
	if err != nil {
		books.ForgetAll(ids)
		return err
	}
	defer ready.close()
	if err := books.CreatedAll(ids, func(_ int, obj *state.Object) { obj.PID, obj.StartTime = pr.PID, pr.StartTime }); err != nil {
		pr.Stop(time.Second)
		return err
	}
	books.ForgetAll(oldIDs)
	for _, m := range members {
		m.PID, m.StartTime, m.Health = pr.PID, pr.StartTime, ""
	}
	// One process, one readiness for all its members.
	if err := ready.wait(ctx, pr, o.HealthTimeout, func() string { return logTail(n.Log) }); err != nil {
		return fmt.Errorf("node %s: %w", n.Name, err)
	}
	return nil
}

// groupOf returns the nodes of l that group names, in the lab's order.
func groupOf(l *Lab, group string) []*Node {
	var out []*Node
	for i := range l.Nodes {
		if l.Nodes[i].Group == group {
			out = append(out, &l.Nodes[i])
		}
	}
	return out
}
