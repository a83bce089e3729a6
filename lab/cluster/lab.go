package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rocelab/rocelab/internal/jsonapi"
	"github.com/rocelab/rocelab/lab/cluster/agentapi"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/control/lifecycle"
)

// The functions below are the lifecycle of any lab, on one machine or
// across machines: a lab whose runtime is deploy.RuntimeMachines is
// reached through its machines' agents, any other goes to package deploy.

// Deploy builds the lab o describes: across the machines of agents
// ("host:port") when there are any — each agent deploys its part, all with
// one scale, seed and fabric-time origin — else on this machine.
func Deploy(ctx context.Context, o deploy.Options, agents []string) (*deploy.Lab, error) {
	if len(agents) == 0 {
		return deploy.Deploy(ctx, o)
	}
	switch {
	case o.Topology == nil:
		return nil, errors.New("deploy: no topology")
	case o.NodeGroups != 0:
		return nil, fmt.Errorf("deploy: %w: node groups are for a lab on one machine, not across agents", deploy.ErrOptions)
	case o.ExactLinks:
		return nil, fmt.Errorf("deploy: %w: exact links are for a lab on one machine, not across agents", deploy.ErrOptions)
	}
	return deployAcross(ctx, o, agents)
}

// Destroy removes lab under root; a lab that spans machines has each
// agent remove its part first (an agent that does not answer keeps the
// lab recorded, and the error names its machine).
func Destroy(ctx context.Context, root, lab string) (lifecycle.Report, error) {
	if err := removePartsOf(ctx, root, lab); err != nil {
		return lifecycle.Report{}, fmt.Errorf("destroy %s: %w", lab, err)
	}
	return deploy.Destroy(ctx, root, lab)
}

// DestroyAll destroys every lab under root that o selects, the parts of
// those that span machines first.
func DestroyAll(ctx context.Context, root string, o deploy.DestroyOptions) (lifecycle.Report, error) {
	labs, _ := state.List(state.RootOr(root))
	var errs []error
	failed := map[string]bool{}
	for _, lab := range labs {
		if o.Only != nil && !o.Only(lab) {
			continue
		}
		if err := removeAgentParts(ctx, root, lab); err != nil {
			errs = append(errs, fmt.Errorf("destroy %s: %w", lab, err))
			failed[lab] = true
		}
	}
	only := o.Only
	o.Only = func(lab string) bool { return !failed[lab] && (only == nil || only(lab)) }
	rep, err := deploy.DestroyAll(ctx, root, o)
	return rep, errors.Join(append(errs, err)...)
}

// removePartsOf asks the agents of lab's parts, if it spans machines, to
// destroy them; a lab that is not under root has none.
func removePartsOf(ctx context.Context, root, lab string) error {
	labs, _ := state.List(state.RootOr(root))
	if !slices.Contains(labs, lab) {
		return nil
	}
	return removeAgentParts(ctx, root, lab)
}

// removeAgentParts is removePartsOf for lab, which is under root (opening
// its books makes them).
func removeAgentParts(ctx context.Context, root, lab string) error {
	books, err := state.Open(state.RootOr(root), lab, false)
	if err != nil {
		return nil // deploy.Destroy reports it
	}
	defer books.Close()
	if books.Info("runtime") != deploy.RuntimeMachines {
		return nil
	}
	if err := askParts(ctx, books); err != nil {
		return err
	}
	return removeParts(ctx, books)
}

// askParts asks the agent of every part l records for its machine before
// a destroy touches any: an agent that is down or refuses the token would
// leave its part behind while the others went, and the lab half gone.
// Then nothing is destroyed, the lab is kept whole and usable, and the
// error names each machine, its agent and what is wrong.
func askParts(ctx context.Context, l *state.Lab) error {
	_, errs := eachPart(ctx, l, agentTimeout, func(ctx context.Context, a *agentapi.Client) error {
		_, err := a.Info(ctx)
		return err
	})
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w\nnothing was destroyed: the lab is kept, whole and usable; destroy it again once every agent answers (a token: $%s or $%s as the agents have it)", err, jsonapi.TokenEnv, jsonapi.TokenFileEnv)
	}
	return nil
}

// Restart brings node of lab (lab "": the only lab that has it) back
// (deploy.Restart), through its machine's agent in a lab that spans
// machines.
func Restart(ctx context.Context, root, lab, node string, o deploy.RestartOptions) (*deploy.Node, error) {
	l, n, err := deploy.FindNode(root, lab, node)
	if err != nil {
		return nil, err
	}
	if l.Runtime == deploy.RuntimeMachines {
		return restartAcross(ctx, l, n)
	}
	return deploy.Restart(ctx, root, l.Name, node, o)
}

// Repair restarts every dead node of lab (deploy.Repair); in a lab that
// spans machines each agent repairs its part, and a machine that lost its
// part (it rebooted) deploys it again.
func Repair(ctx context.Context, root, lab string, o deploy.RestartOptions) ([]string, error) {
	l, err := deploy.PickLab(root, lab)
	if err != nil {
		return nil, err
	}
	if l.Runtime == deploy.RuntimeMachines {
		return repairAcross(ctx, l)
	}
	return deploy.Repair(ctx, root, l.Name, o)
}

// Exec runs argv in node of lab (deploy.Exec); on another machine through
// its agent, with no standard input and the output written when it ends.
func Exec(ctx context.Context, root, lab, node string, argv []string, stdio sandbox.Stdio) (int, error) {
	l, n, err := deploy.FindNode(root, lab, node)
	if err != nil {
		return -1, err
	}
	if l.Runtime == deploy.RuntimeMachines {
		return execAcross(ctx, l, n, argv, stdio)
	}
	return deploy.Exec(ctx, root, l.Name, node, argv, stdio)
}

// Capture records target ("NODE:PORT") of lab into o.File
// (deploy.Capture); a node on another machine writes the capture there and
// its agent sends it over when it ends.
func Capture(ctx context.Context, root, lab, target string, o deploy.CaptureOptions) (deploy.CaptureResult, error) {
	node, port, ok := strings.Cut(target, ":")
	if ok && node != "" && port != "" {
		l, n, err := deploy.FindNode(root, lab, node)
		if err != nil {
			return deploy.CaptureResult{}, err
		}
		if l.Runtime == deploy.RuntimeMachines {
			if n.Socket == "" {
				return deploy.CaptureResult{}, fmt.Errorf("node %s runs no node process to capture on", node)
			}
			return captureAcross(ctx, l, n, port, o)
		}
	}
	return deploy.Capture(ctx, root, lab, target, o)
}
