package jobs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/rocelab/rocelab/faults"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/topologies"
)

// Faults is a live lab's fault placer (faults.Placer): a target resolves
// against the lab's topology as deployed (topologies.Topology.ResolveTarget:
// node:port, node, "a to b", "a and b"), and the node process of each
// port the target names builds the fault and runs it on that port's
// egress. A fault's ID is node/fN, unique in the lab.
type Faults struct {
	lab *Lab
	mu  sync.Mutex // guards rec and topo
	// rec and topo are the lab as deployed, read once: a run that places
	// faults on its own lab at instants of fabric time reads no file then.
	rec  *deploy.Lab
	topo *topologies.Topology
}

var _ faults.Placer = (*Faults)(nil)

// Faults returns the lab's fault placer.
func (l *Lab) Faults() *Faults { return &Faults{lab: l} }

// Dead is a node whose faults could not be read: its process is gone or
// does not answer.
type Dead struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
}

// place is one port a target names: the node, the interface, its socket.
type place struct{ node, port, socket string }

// Add places spec on every port target names; if one node refuses it,
// the faults already placed are taken off again (Lab.Explain says what
// the lab's health finds wrong with the node).
func (p *Faults) Add(ctx context.Context, target string, spec faults.Spec) ([]faults.Placed, error) {
	places, err := p.resolve(target)
	if err != nil {
		return nil, err
	}
	var out []faults.Placed
	for _, pl := range places {
		fi, err := p.lab.client(pl.node, pl.socket).AddFault(ctx, pl.port, spec)
		if err != nil {
			for _, done := range out {
				p.Remove(context.WithoutCancel(ctx), done.ID)
			}
			return nil, fmt.Errorf("%s on %s: %w", target, pl.node, err)
		}
		out = append(out, placed(pl.node, fi))
	}
	return out, nil
}

// resolve turns target into the ports it names.
func (p *Faults) resolve(target string) ([]place, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rec == nil {
		l, err := deploy.TargetLab(p.lab.Root, p.lab.Name, firstTargetNode(target))
		if err != nil {
			return nil, inputIf(err)
		}
		if p.topo, err = deploy.Topology(l); err != nil {
			return nil, err
		}
		p.rec = l
	}
	l := p.rec
	tg, err := p.topo.ResolveTarget(target)
	if err != nil {
		return nil, input(fmt.Errorf("target %q: %w", target, err))
	}
	byName := map[string]*deploy.Node{}
	for i := range l.Nodes {
		byName[l.Nodes[i].Name] = &l.Nodes[i]
	}
	proc := func(name string) (*deploy.Node, error) {
		if n := byName[name]; n != nil && n.Socket != "" {
			return n, nil
		}
		return nil, input(fmt.Errorf("target %q: %s runs no node process (no faults on it)", target, name))
	}
	if tg.Node != nil {
		n, err := proc(tg.Node.Name)
		if err != nil {
			return nil, err
		}
		return []place{{n.Name, "all", n.Socket}}, nil
	}
	var out []place
	for _, d := range tg.Directions {
		n, err := proc(d.From.Node.Name)
		if err != nil {
			return nil, err
		}
		ifname := d.From.IfName
		for _, itf := range n.Interfaces {
			if port, name, _ := strings.Cut(itf, "="); port == d.From.Name {
				ifname = name
			}
		}
		out = append(out, place{n.Name, ifname, n.Socket})
	}
	return out, nil
}

// firstTargetNode returns the node a target starts with, to find its lab.
func firstTargetNode(target string) string {
	s := strings.TrimSpace(target)
	end := len(s)
	for _, sep := range []string{":", " ", "<->", "->", "--"} {
		if i := strings.Index(s, sep); i >= 0 && i < end {
			end = i
		}
	}
	return s[:end]
}

// Remove takes fault id (node/fN) off its node. An ID the node does not
// have is the user's error, which names the node's faults.
func (p *Faults) Remove(ctx context.Context, id string) (faults.Placed, error) {
	node, fid, ok := strings.Cut(id, "/")
	if !ok || node == "" {
		return faults.Placed{}, input(fmt.Errorf("fault ID %q: want node/fN", id))
	}
	if _, err := faults.ParseID(fid); err != nil {
		return faults.Placed{}, input(err)
	}
	_, n, err := deploy.FindNode(p.lab.Root, p.lab.Name, node)
	if err != nil {
		return faults.Placed{}, inputIf(err)
	}
	c := p.lab.client(n.Name, n.Socket)
	fi, err := c.RemoveFault(ctx, fid)
	var ae *nodeapi.APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		have := "none"
		if list, lerr := c.Faults(ctx); lerr == nil && len(list) > 0 {
			var ids []string
			for _, f := range list {
				ids = append(ids, node+"/"+f.ID)
			}
			have = strings.Join(ids, ", ")
		}
		return faults.Placed{}, input(fmt.Errorf("no fault %s (%s has: %s; rocelab fault list shows them all)", id, node, have))
	}
	if err != nil {
		return faults.Placed{}, err
	}
	return placed(node, fi), nil
}

// List is ListAll whose dead nodes are an error (deploy.ErrNodeDead).
func (p *Faults) List(ctx context.Context) ([]faults.Placed, error) {
	out, dead, err := p.ListAll(ctx)
	if err == nil && len(dead) > 0 {
		err = fmt.Errorf("%d node(s) did not answer: %w", len(dead), deploy.ErrNodeDead)
	}
	return out, err
}

// ListAll lists every node's faults; the nodes that do not answer are in
// dead.
func (p *Faults) ListAll(ctx context.Context) ([]faults.Placed, []Dead, error) {
	nodes, err := p.nodes(ctx)
	if err != nil {
		return nil, nil, err
	}
	out := []faults.Placed{}
	var dead []Dead
	for _, n := range nodes {
		if !n.Alive() || n.Health == "-" {
			dead = append(dead, Dead{n.Name, n.Health})
			continue
		}
		list, err := p.lab.client(n.Name, n.Socket).Faults(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			dead = append(dead, Dead{n.Name, err.Error()})
			continue
		}
		for _, fi := range list {
			out = append(out, placed(n.Name, fi))
		}
	}
	return out, dead, nil
}

// Clear removes every fault of every node.
func (p *Faults) Clear(ctx context.Context) (int, error) {
	nodes, err := p.nodes(ctx)
	if err != nil {
		return 0, err
	}
	total := 0
	var errs []error
	for _, n := range nodes {
		if !n.Alive() || n.Health == "-" {
			errs = append(errs, fmt.Errorf("%s: %s: %w", n.Name, n.Health, deploy.ErrNodeDead))
			continue
		}
		k, err := p.lab.client(n.Name, n.Socket).ClearFaults(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.Name, err))
		}
		total += k
	}
	return total, errors.Join(errs...)
}

// nodes returns the node-process nodes of the lab, with their health.
func (p *Faults) nodes(ctx context.Context) ([]deploy.Node, error) {
	l, err := deploy.OnlyLab(ctx, p.lab.Root, p.lab.Name)
	if err != nil {
		return nil, inputIf(err)
	}
	var out []deploy.Node
	for _, n := range l.Nodes {
		if n.Socket != "" {
			out = append(out, n)
		}
	}
	return out, nil
}

// placed is fi, a fault of node, as the lab names it.
func placed(node string, fi nodeapi.FaultInfo) faults.Placed {
	return faults.Placed{ID: node + "/" + fi.ID, Node: node, Spec: fi.Spec, Targets: fi.Targets, Packets: fi.Packets}
}
