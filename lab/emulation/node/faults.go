package node

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/faults"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/wire"
)

// faultSet holds a faults.Chain on the egress of every port of a node,
// between the model and the loop, and the faults placed on them through
// the API. An empty chain calls the loop's sink directly (the faults
// package guarantees it is byte- and timing-identical to no chain), so a
// node without faults behaves exactly as before. Everything but
// construction runs on the loop goroutine.
type faultSet struct {
	node   string
	loop   *emu.Loop
	base   int // the node's port 0 on the loop
	cfg    *Config
	chains []*faults.Chain
	tees   []*pfcTee
	placed map[faults.ID][]int // fault → the ports it is on
	nextID faults.ID
}

var _ telemetry.Source = (*faultSet)(nil)

func newFaultSet(cfg *Config, loop *emu.Loop, base int) *faultSet {
	n := len(cfg.Ports)
	return &faultSet{node: cfg.Name, loop: loop, base: base, cfg: cfg, chains: make([]*faults.Chain, n), tees: make([]*pfcTee, n), placed: map[faults.ID][]int{}}
}

// portLabel is the name port i goes by in fault telemetry (target=): the
// NIC's name on an endpoint node, node:pN on a switch (pN is the
// topology's default name of the port with index N-1).
func (fs *faultSet) portLabel(i int) string {
	if i < len(fs.cfg.NICs) {
		return fs.cfg.NICs[i].Name
	}
	return fs.node + ":p" + strconv.Itoa(i+1)
}

// connect connects port i of the loop to model, through a tee that hands
// PFC frames to the port's traffic generators too, and returns the chain
// the model must transmit into.
func (fs *faultSet) connect(i int, model wire.Sink) wire.Sink {
	tee := &pfcTee{next: model}
	fs.tees[i] = tee
	c := faults.NewChain(fs.loop.Connect(fs.base+i, tee), telemetry.Label{Name: "target", Value: fs.portLabel(i)})
	fs.chains[i] = c
	return c
}

// add builds spec on every port of ports and places it under one new ID;
// nothing is placed if a build fails.
func (fs *faultSet) add(ports []int, spec faults.Spec) (faults.ID, error) {
	id := fs.nextID + 1
	built := make([]faults.Fault, len(ports))
	for k, i := range ports {
		env := faults.Env{
			Sched: fs.loop, Rate: fs.cfg.Ports[i].Rate, SrcMAC: fs.loop.PortMAC(fs.base + i),
			// Each fault ID is new: its stream is not kept by the loop
			// (faults added and cleared for days would pile them up).
			Rand: fs.loop.NewRand(fmt.Sprintf("fault/%s/%s", fs.portLabel(i), id)),
			// Generated traffic needs bytes on a real wire; storm frames
			// go without, so that the loop serializes them with the PFC
			// destination address (it rewrites the MACs of frames with
			// bytes to the peer's).
			Raw: spec.Kind() != faults.KindStorm,
		}
		if i < len(fs.cfg.NICs) {
			env.SrcIP, _ = netip.ParseAddr(fs.cfg.NICs[i].IP)
		}
		f, err := spec.New(env)
		if err != nil {
			for _, b := range built[:k] {
				b.Close()
			}
			return 0, badRequest("%s on %s: %v", spec.Kind(), fs.portLabel(i), err)
		}
		built[k] = f
	}
	fs.nextID = id
	for k, i := range ports {
		if err := fs.chains[i].AddAs(id, built[k]); err != nil {
			return 0, err
		}
		if g, ok := built[k].(*faults.TrafficSource); ok {
			fs.tees[i].gens = append(fs.tees[i].gens, g)
		}
	}
	fs.placed[id] = slices.Clone(ports)
	return id, nil
}

// remove takes fault id off every port; false if there is none.
func (fs *faultSet) remove(id faults.ID) bool {
	ports, ok := fs.placed[id]
	if !ok {
		return false
	}
	delete(fs.placed, id)
	for _, i := range ports {
		if g, ok := fs.chains[i].Fault(id).(*faults.TrafficSource); ok {
			fs.tees[i].gens = slices.DeleteFunc(fs.tees[i].gens, func(x *faults.TrafficSource) bool { return x == g })
		}
		fs.chains[i].Remove(id)
	}
	return true
}

// ids returns the placed faults' IDs in order.
func (fs *faultSet) ids() []faults.ID {
	out := make([]faults.ID, 0, len(fs.placed))
	for id := range fs.placed {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// clear removes every fault, oldest first, and returns how many.
func (fs *faultSet) clear() int {
	ids := fs.ids()
	for _, id := range ids {
		fs.remove(id)
	}
	return len(ids)
}

// info describes fault id.
func (fs *faultSet) info(id faults.ID) nodeapi.FaultInfo {
	out := nodeapi.FaultInfo{ID: id.String()}
	for _, i := range fs.placed[id] {
		out.Ports = append(out.Ports, fs.cfg.Ports[i].IfName)
		out.Targets = append(out.Targets, fs.portLabel(i))
		f := fs.chains[i].Fault(id)
		if f == nil {
			continue
		}
		if out.Spec == "" {
			out.Spec, out.Kind = f.String(), string(f.Kind())
			out.Packets = map[string]int64{}
			for _, e := range countedEvents(f.Kind()) {
				out.Packets[e] = 0
			}
		}
		f.Collect(func(s telemetry.Sample) {
			if s.Name == "fault_packets_total" && s.Value != 0 {
				out.Packets[s.Label("event")] += int64(s.Value)
			}
		})
	}
	return out
}

// Collect emits every chain's fault samples (labels target, fault, kind,
// event), with node= the node.
func (fs *faultSet) Collect(emit func(telemetry.Sample)) {
	for _, c := range fs.chains {
		if c == nil {
			continue
		}
		c.Collect(func(s telemetry.Sample) {
			s.Labels = telemetry.With([]telemetry.Label{{Name: "node", Value: fs.node}}, s.Labels...)
			emit(s)
		})
	}
}

// pfcTee hands the PFC and PAUSE frames a port receives to the traffic
// generators sending from that port (so that background traffic obeys
// PFC like the NIC or switch port it shares) before the model gets them.
type pfcTee struct {
	next wire.Sink
	gens []*faults.TrafficSource
}

func (t *pfcTee) Receive(p *wire.Packet) {
	if len(t.gens) > 0 && (p.Kind == wire.KindPFC || p.Kind == wire.KindPause) {
		for _, g := range t.gens {
			g.Receive(p)
		}
	}
	t.next.Receive(p)
}

// countedEvents are the counters a fault of kind is about: listed (at 0
// too) by fault list, so that a fault that hit nothing says so.
func countedEvents(kind faults.Kind) []string {
	switch kind {
	case faults.KindLoss, faults.KindDown, faults.KindFlap, faults.KindPFCOff:
		return []string{"matched", "dropped"}
	case faults.KindCorrupt:
		return []string{"matched", "corrupted"}
	case faults.KindDelay, faults.KindRate:
		return []string{"matched", "delayed"}
	case faults.KindReorder:
		return []string{"matched", "reordered"}
	case faults.KindDuplicate:
		return []string{"matched", "duplicated"}
	case faults.KindECNOff, faults.KindDSCPMap:
		return []string{"matched", "rewritten"}
	case faults.KindStorm, faults.KindElephant, faults.KindIncast:
		return []string{"generated"}
	}
	return []string{"matched"}
}
