package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// ErrNoLab is returned for a lab that was named but is not deployed.
var ErrNoLab = errors.New("not deployed")

// ErrNodeDead is returned when a node a command needs does not answer:
// its process is gone or its socket refuses.
var ErrNodeDead = errors.New("node is dead")

// PickLab is the one rule for "the lab" of a command: the lab named, or,
// when none is named, the only deployed lab (ErrPickLab otherwise).
func PickLab(root, lab string) (*Lab, error) {
	if lab != "" {
		l, err := readLab(root, lab)
		if err != nil {
			return nil, fmt.Errorf("lab %s: %w (rocelab inspect lists the labs; a Lab made with kubectl: rocelab attach --name %s)", lab, ErrNoLab, lab)
		}
		return l, nil
	}
	labs, err := state.List(state.RootOr(root))
	if err != nil {
		return nil, err
	}
	var deployed []string
	for _, name := range labs {
		if _, err := os.Stat(filepath.Join(state.Dir(state.RootOr(root), name), LabFile)); err == nil {
			deployed = append(deployed, name)
		}
	}
	switch len(deployed) {
	case 0:
		return nil, fmt.Errorf("no lab is deployed (rocelab deploy first): %w", ErrPickLab)
	case 1:
		return readLab(root, deployed[0])
	}
	return nil, fmt.Errorf("%d deployed labs (%s): %w", len(deployed), strings.Join(deployed, ", "), ErrPickLab)
}

// Problem is one thing wrong with a running lab: a node whose process is
// dead or does not answer, or a link direction a fault holds down.
type Problem struct {
	Node string `json:"node"`
	// What is "dead" (the node process), "behind" (its loop does not keep
	// up with the dilated clock), "down" (a link fault) or "slow" (a fault
	// that holds frames back).
	What   string `json:"what"`
	Detail string `json:"detail"`
	// Fault is the fault holding a link down (node/id), for "down", or
	// holding frames back (delay, rate), for "slow".
	Fault string `json:"fault,omitempty"`
	// Machine is the machine whose agent cannot be reached or refuses,
	// for "unreachable" (Node then lists its nodes).
	Machine string `json:"machine,omitempty"`
}

func (p Problem) String() string {
	switch p.What {
	case "dead":
		return fmt.Sprintf("node %s is dead (%s): rocelab restart %s brings it back", p.Node, p.Detail, p.Node)
	case "unreachable":
		return fmt.Sprintf("%s (nodes %s)", p.Detail, p.Node)
	case "behind":
		return fmt.Sprintf("node %s is %s: the machine does not keep up with the lab's dilated clock; results measured now are not the fabric's (deploy again with a larger --scale, or stop what else runs)", p.Node, p.Detail)
	}
	return fmt.Sprintf("%s: %s (rocelab fault clear %s removes it)", p.Node, p.Detail, p.Fault)
}

// nodeAlive asks n's process for /health within timeout; "" is healthy,
// else why not. behind is the node's own word that its loop has fallen
// behind the dilated clock ("" when on time).
func nodeAlive(ctx context.Context, l *Lab, n *Node, timeout time.Duration) (why, behind string) {
	if n.Socket == "" {
		return "", ""
	}
	if n.PID != 0 && !processOf(n).Alive() {
		return "process gone", ""
	}
	c := nodeapi.NewClient(n.Socket)
	defer c.Close()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	h, err := c.Health(cctx)
	if t := AgentTrouble(l.Name, n.Machine, agentOf(l, n.Machine), err); t != "" {
		return HealthUnreachable + t, ""
	}
	switch {
	case err != nil && errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %v", timeout), ""
	case err != nil:
		return "does not answer: " + rootCause(err), ""
	case h.Status != "ok":
		return "status " + h.Status, ""
	}
	return "", h.Behind
}

// rootCause is the innermost message of err (connect: connection refused).
func rootCause(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}

// Diagnose names what is wrong with lab (lab "": the only lab): dead node
// processes, and faults that hold a link down (down, flap) on live nodes.
// It takes a few seconds at most, whatever the lab's state.
func Diagnose(ctx context.Context, root, lab string) ([]Problem, error) {
	l, err := PickLab(root, lab)
	if err != nil {
		return nil, err
	}
	health(ctx, l)
	out := unreachable(l)
	for i := range l.Nodes {
		n := &l.Nodes[i]
		if strings.HasPrefix(n.Health, HealthUnreachable) {
			continue
		}
		if n.Health == HealthBehind {
			out = append(out, Problem{Node: n.Name, What: "behind", Detail: n.BehindDetail})
			continue
		}
		if n.Alive() {
			continue
		}
		out = append(out, Problem{Node: n.Name, What: "dead", Detail: n.Health})
	}
	for i := range l.Nodes {
		n := &l.Nodes[i]
		if !n.Alive() || n.Health == "-" {
			continue
		}
		c := nodeapi.NewClient(n.Socket)
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs, err := c.Faults(cctx)
		cancel()
		c.Close()
		if err != nil {
			continue
		}
		for _, f := range fs {
			id := n.Name + "/" + f.ID
			detail := fmt.Sprintf("fault %s %s on %s", id, f.Spec, strings.Join(f.Targets, ","))
			switch f.Kind {
			case "down", "flap":
				out = append(out, Problem{Node: n.Name, What: "down", Fault: id, Detail: detail})
			case "delay", "reorder", "rate":
				// Not dead, but it holds frames back: at the lab's scale
				// k a fabric-time delay can outlast a stall limit.
				out = append(out, Problem{Node: n.Name, What: "slow", Fault: id,
					Detail: detail + fmt.Sprintf(" holds frames back (fabric time; ×%d of wall clock at this lab's scale)", l.Scale)})
			}
		}
	}
	return out, nil
}

// Explain adds to err what Diagnose finds wrong with lab, one problem a
// line: "perf … no progress" becomes "… : node rtsw1 is dead (process
// gone)". With nothing found, or err nil, it returns err as it is.
func Explain(ctx context.Context, root, lab string, err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	ps, derr := Diagnose(dctx, root, lab)
	if lab != "" && errors.Is(derr, ErrNoLab) {
		return &explained{err: err, why: fmt.Sprintf("  lab %s is gone: it was destroyed while this ran (nothing to restart)", lab)}
	}
	if derr != nil || len(ps) == 0 {
		return err
	}
	lines := make([]string, 0, len(ps))
	for _, p := range ps {
		lines = append(lines, "  "+p.String())
	}
	slices.Sort(lines)
	return &explained{err: err, why: strings.Join(lines, "\n")}
}

type explained struct {
	err error
	why string
}

func (e *explained) Error() string { return e.err.Error() + "\nthe lab's health:\n" + e.why }
func (e *explained) Unwrap() error { return e.err }
