package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/topologies"
)

// NICRef names one NIC of a running endpoint node.
type NICRef struct {
	Node   string // the node (host) name
	NIC    string // the NIC name ("host1:gpu0") or port ("gpu0")
	Client *nodeapi.Client
}

func (r NICRef) String() string { return r.NIC }

// InputError is an error in what the user named (a NIC, a target, a lab):
// the CLI exits 2 on it.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// input marks err as the user's (and the deploy errors that mean a name
// the lab does not have).
func input(err error) error {
	if err == nil {
		return nil
	}
	return &InputError{err}
}

// notFound are the deploy errors that mean the user named a lab, node or
// port the machine does not have (or named no lab among several).
var notFound = []error{deploy.ErrNoNode, deploy.ErrPickLab, deploy.ErrNoLab, deploy.ErrNoPort}

// inputIf marks err as the user's when it is one of notFound.
func inputIf(err error) error {
	if err != nil && !errors.As(err, new(*InputError)) && IsInput(err) {
		return input(err)
	}
	return err
}

// IsInput reports whether err is the user's: an InputError, or a deploy
// error saying that a lab, node or port named does not exist.
func IsInput(err error) bool {
	if errors.As(err, new(*InputError)) {
		return true
	}
	for _, e := range notFound {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Lab is a deployed lab as jobs reach it: by name under Root ("" Name:
// the only lab, or the only lab that has the nodes named), with one API
// client per node.
type Lab struct {
	Root, Name string
	mu         sync.Mutex // guards clients
	clients    map[string]*nodeapi.Client
	// scale and rates are what NIC learned of the lab.
	scale int
	rates map[string]clock.Rate
}

// Close closes the clients.
func (l *Lab) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.clients {
		c.Close()
	}
}

func (l *Lab) client(name, socket string) *nodeapi.Client {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.clients == nil {
		l.clients = map[string]*nodeapi.Client{}
	}
	c := l.clients[name]
	if c == nil {
		c = nodeapi.NewClient(socket)
		l.clients[name] = c
	}
	return c
}

// NIC resolves "HOST[:gpuN]" (default port gpu0) to a back-end NIC of a
// running endpoint node of the lab.
func (l *Lab) NIC(spec string) (NICRef, error) {
	host, port, ok := strings.Cut(spec, ":")
	if !ok {
		port = "gpu0"
	}
	if host == "" || port == "" {
		return NICRef{}, input(fmt.Errorf("%q: want HOST[:gpuN]", spec))
	}
	rec, n, err := deploy.FindNode(l.Root, l.Name, host)
	if err != nil {
		return NICRef{}, inputIf(err)
	}
	if t, err := deploy.Topology(rec); err == nil {
		if err := backEndNIC(t, host, port); err != nil {
			return NICRef{}, input(fmt.Errorf("%q: %w", spec, err))
		}
		if l.rates == nil {
			l.rates = map[string]clock.Rate{}
		}
		l.rates[host+":"+port] = t.Node(host).Port(port).Rate
	}
	l.scale = rec.Scale
	if n.Socket == "" {
		return NICRef{}, fmt.Errorf("%s in lab %s runs no endpoint process", host, rec.Name)
	}
	if l.Name == "" {
		l.Name = rec.Name
	}
	return NICRef{Node: host, NIC: host + ":" + port, Client: l.client(host, n.Socket)}, nil
}

// Estimate is jobs.Estimate for spec from NIC from (resolved by NIC).
func (l *Lab) Estimate(spec PerfSpec, from NICRef) string {
	return Estimate(spec, l.rates[from.NIC], l.scale)
}

// backEndNIC says why host:port is not a back-end NIC of t, or nil.
func backEndNIC(t *topologies.Topology, host, port string) error {
	n := t.Node(host)
	if n == nil {
		return fmt.Errorf("no node %s in the lab", host)
	}
	var hosts, nics []string
	for _, m := range t.Nodes {
		if m.Kind == topologies.KindHost {
			hosts = append(hosts, m.Name)
		}
	}
	for _, p := range n.Ports {
		if p.Plane == topologies.BE {
			nics = append(nics, p.Name)
		}
	}
	if n.Kind != topologies.KindHost || len(nics) == 0 {
		return fmt.Errorf("%s is a %s, not a host with back-end NICs (hosts: %s)", host, n.Kind, strings.Join(hosts, ", "))
	}
	p := n.Port(port)
	switch {
	case p == nil:
		return fmt.Errorf("%s has no NIC %s (its back-end NICs: %s)", host, port, strings.Join(nics, ", "))
	case p.Plane != topologies.BE:
		return fmt.Errorf("%s:%s is a front-end NIC: perf and collectives run on the back end (%s)", host, port, strings.Join(nics, ", "))
	}
	return nil
}

// AllNICs returns every NIC of every endpoint node of the lab, in node
// order.
func (l *Lab) AllNICs(ctx context.Context) ([]NICRef, error) {
	rec, err := deploy.OnlyLab(ctx, l.Root, l.Name)
	if err != nil {
		return nil, inputIf(err)
	}
	var out []NICRef
	for _, n := range rec.Nodes {
		if n.Kind == "switch" || n.Socket == "" {
			continue
		}
		c := l.client(n.Name, n.Socket)
		nics, err := c.NICs(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: %w: %w", n.Name, deploy.ErrNodeDead, err)
		}
		for _, nc := range nics {
			out = append(out, NICRef{Node: n.Name, NIC: nc.Name, Client: c})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("lab %s has no endpoint NIC", rec.Name)
	}
	return out, nil
}

// Explain adds to err what the lab's health finds wrong (deploy.Explain).
func (l *Lab) Explain(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	return deploy.Explain(ctx, l.Root, l.Name, err)
}

// Behind names the nodes of the lab that are behind its scaled clock now
// (none when the lab cannot be read within 5 s).
func (l *Lab) Behind(ctx context.Context) []string {
	dctx, cancel := afterwards(ctx)
	defer cancel()
	ps, err := deploy.Diagnose(dctx, l.Root, l.Name)
	if err != nil {
		return nil
	}
	var names []string
	for _, p := range ps {
		if p.What == deploy.HealthBehind {
			names = append(names, p.Node)
		}
	}
	return names
}
