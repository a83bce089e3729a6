package faults

import "context"

// Placer places faults on the egress of a fabric's ports. A target names
// ports as scenario files and `rocelab fault` do ("node:port", or "node"
// for all its ports; a placer that knows the topology also takes "a to b"
// and "a and b", topologies.Topology.ResolveTarget); Add builds spec for
// every port the target names and puts it there, and returns one Placed
// per fault it made. Two implement it: the simulator's injector
// (faults/inject), whose faults run on the virtual clock, and a live
// lab's placer (lab/emulation/jobs), whose node processes build and run
// them on their own ports. A Schedule applies faults through either.
type Placer interface {
	Add(ctx context.Context, target string, s Spec) ([]Placed, error)
	// Remove takes fault id off, restoring the exact previous behaviour.
	Remove(ctx context.Context, id string) (Placed, error)
	List(ctx context.Context) ([]Placed, error)
	// Clear removes every fault and says how many it removed.
	Clear(ctx context.Context) (int, error)
}

// Placed is one fault a Placer placed: its ID (unique among the placer's
// faults), the node that runs it ("" when the placer is the whole fabric),
// its spec, the ports it sits on ("node:port") and its packet counters by
// name (dropped, delayed, …; what the fault counts; none where the
// placer's telemetry counts them).
type Placed struct {
	ID      string           `json:"id"`
	Node    string           `json:"node,omitempty"`
	Spec    string           `json:"spec"`
	Targets []string         `json:"targets"`
	Packets map[string]int64 `json:"packets"`
}
