// Package inject places faults on a simulated fabric: an Injector owns a
// faults.Chain on every link direction of a fabric built with
// switchmodel/fabric and resolves targets (node:port, node/in, …/both)
// over the topology. It is the simulator's side of faults; a node process
// applies faults to its own ports through package faults alone, so it
// does not link the topology.
package inject

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/faults"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/wire"
)

// Injector owns a Chain on every link direction of a simulated fabric and
// places faults on them by target. Its Wrap method is the
// fabric.SimOptions.Wrap hook:
//
//	inj := inject.New(e, e.Rand)
//	f, _ := fabric.BuildSim(e, topo, fabric.SimOptions{Wrap: inj.Wrap})
//	placed, err := inj.Add(ctx, "leaf1:p3", spec)
//
// A target names link directions by their sending port:
//
//	node:port     the direction leaving that port
//	node          every direction leaving the node
//	node:port/in  the direction arriving at that port (its peer's)
//	node/in       every direction arriving at the node
//	…/both        both directions
//
// Generators (storm, elephant, incast) take only leaving directions.
// Each fault draws from its own stream, rnd("fault/<node:port>/<id>").
type Injector struct {
	sched clock.Scheduler
	rnd   func(name string) *rand.Rand
	// Raw makes generators build frame bytes (emulation).
	Raw bool
	// On, if set, gives the scheduler and random streams of the node
	// that sends on a direction, for the faults placed on it: a
	// simulation cut over several engines runs each fault on the engine
	// of the link's sender, which is where its frames are. Otherwise
	// every fault uses New's.
	On func(from *topologies.Port) (clock.Scheduler, func(name string) *rand.Rand)

	chains map[*topologies.Port]*faults.Chain
	order  []*topologies.Port
	placed map[faults.ID][]placement
	nextID faults.ID
}

type placement struct {
	port  *topologies.Port
	local faults.ID
}

var _ faults.Placer = (*Injector)(nil)

// New returns an injector on sched whose faults draw from
// rnd(name) — pass a sim.Engine's Rand.
func New(sched clock.Scheduler, rnd func(name string) *rand.Rand) *Injector {
	return &Injector{sched: sched, rnd: rnd, chains: map[*topologies.Port]*faults.Chain{}, placed: map[faults.ID][]placement{}}
}

// Wrap puts an empty Chain in front of s, the direction leaving from.
// Its signature is fabric.SimOptions.Wrap's.
func (in *Injector) Wrap(from *topologies.Port, s wire.Sink) wire.Sink {
	c := faults.NewChain(s, telemetry.Label{Name: "target", Value: portName(from)})
	if _, ok := in.chains[from]; !ok {
		in.order = append(in.order, from)
	}
	in.chains[from] = c
	return c
}

func portName(p *topologies.Port) string { return p.Node.Name + ":" + p.Name }

// Chain returns the chain of the direction leaving node:port, or nil.
func (in *Injector) Chain(nodePort string) *faults.Chain {
	for _, p := range in.order {
		if portName(p) == nodePort {
			return in.chains[p]
		}
	}
	return nil
}

// Resolve returns the directions a target names, by sending port, in
// wrapping order.
func (in *Injector) Resolve(target string) ([]*topologies.Port, error) {
	name, dir, _ := strings.Cut(target, "/")
	if dir == "" {
		dir = "out"
	}
	if dir != "out" && dir != "in" && dir != "both" {
		return nil, fmt.Errorf("target %q: direction %q: want in, out or both", target, dir)
	}
	node, port, hasPort := strings.Cut(name, ":")
	if node == "" || hasPort && port == "" {
		return nil, fmt.Errorf("target %q: want node, node:port, with /in or /both", target)
	}
	var out []*topologies.Port
	found := false
	for _, p := range in.order {
		for _, cand := range []struct {
			p   *topologies.Port
			dir string
		}{{p, "out"}, {p.Peer, "in"}} {
			if cand.p == nil || cand.p.Node.Name != node || hasPort && cand.p.Name != port {
				continue
			}
			found = true
			if dir == cand.dir || dir == "both" {
				out = append(out, p)
			}
		}
	}
	if !found || len(out) == 0 {
		return nil, fmt.Errorf("target %q: no wrapped link direction (unknown node or port, or a NIC not attached yet)", target)
	}
	return out, nil
}

// Add builds spec on every direction target names and returns one ID for
// all of them. It fails, adding nothing, if any build fails.
func (in *Injector) Add(_ context.Context, target string, spec faults.Spec) ([]faults.Placed, error) {
	id, err := in.place(target, spec)
	if err != nil {
		return nil, err
	}
	return []faults.Placed{in.placedOf(id)}, nil
}

// place builds spec for every direction target names and puts it on each
// under one ID.
func (in *Injector) place(target string, spec faults.Spec) (faults.ID, error) {
	ports, err := in.Resolve(target)
	if err != nil {
		return 0, err
	}
	id := in.nextID + 1
	built := make([]faults.Fault, len(ports))
	for i, p := range ports {
		sched, rnd := in.sched, in.rnd
		if in.On != nil {
			sched, rnd = in.On(p)
		}
		env := faults.Env{Sched: sched, Rate: p.Rate, Raw: in.Raw}
		copy(env.SrcMAC[:], p.MAC)
		if p.Addr.IsValid() {
			env.SrcIP = p.Addr.Addr()
		}
		if rnd != nil {
			env.Rand = rnd(fmt.Sprintf("fault/%s/%s", portName(p), id))
		}
		f, err := spec.New(env)
		if err != nil {
			for _, b := range built[:i] {
				b.Close()
			}
			return 0, fmt.Errorf("%s on %s: %w", spec.Kind(), portName(p), err)
		}
		built[i] = f
	}
	in.nextID = id
	for i, p := range ports {
		if err := in.chains[p].AddAs(id, built[i]); err != nil {
			return 0, err
		}
		in.placed[id] = append(in.placed[id], placement{port: p, local: id})
	}
	return id, nil
}

// Remove takes fault id ("f3") off every direction it was placed on.
func (in *Injector) Remove(_ context.Context, id string) (faults.Placed, error) {
	fid, err := faults.ParseID(id)
	if err != nil {
		return faults.Placed{}, err
	}
	if _, ok := in.placed[fid]; !ok {
		return faults.Placed{}, fmt.Errorf("no fault %s", id)
	}
	return in.remove(fid), nil
}

// remove takes placed fault id off its directions and returns what it was.
func (in *Injector) remove(id faults.ID) faults.Placed {
	p := in.placedOf(id)
	for _, x := range in.placed[id] {
		in.chains[x.port].Remove(x.local)
	}
	delete(in.placed, id)
	return p
}

// Clear removes every fault.
func (in *Injector) Clear(context.Context) (int, error) {
	ids := slices.Sorted(maps.Keys(in.placed))
	for _, id := range ids {
		in.remove(id)
	}
	return len(ids), nil
}

// List returns the faults placed, by ID.
func (in *Injector) List(context.Context) ([]faults.Placed, error) {
	var out []faults.Placed
	for _, id := range slices.Sorted(maps.Keys(in.placed)) {
		out = append(out, in.placedOf(id))
	}
	return out, nil
}

// placedOf describes fault id: its spec and directions (its counters are
// the chains' telemetry, Collect).
func (in *Injector) placedOf(id faults.ID) faults.Placed {
	p := faults.Placed{ID: id.String()}
	for _, x := range in.placed[id] {
		p.Targets = append(p.Targets, portName(x.port))
		if f := in.chains[x.port].Fault(x.local); f != nil && p.Spec == "" {
			p.Spec = f.String()
		}
	}
	return p
}

// Collect emits every chain's samples (target=node:port, fault=id).
func (in *Injector) Collect(emit func(telemetry.Sample)) {
	for _, p := range in.order {
		in.chains[p].Collect(emit)
	}
}
