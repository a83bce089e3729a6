package faults

import (
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/wire"
)

// Kind names a fault model; it is the first word of a Spec.
type Kind string

// Kinds of faults.
const (
	KindLoss      Kind = "loss"      // Bernoulli or Gilbert–Elliott loss
	KindCorrupt   Kind = "corrupt"   // bit flips (RoCE with bytes) or drop-as-corrupted
	KindDelay     Kind = "delay"     // constant delay plus jitter, optional reordering
	KindReorder   Kind = "reorder"   // a fraction of packets held back
	KindDuplicate Kind = "duplicate" // a fraction of packets sent twice
	KindRate      Kind = "rate"      // the link trained at a lower rate
	KindDown      Kind = "down"      // link down: everything dropped
	KindFlap      Kind = "flap"      // periodic link down
	KindStorm     Kind = "storm"     // a PFC pause storm generator
	KindECNOff    Kind = "ecn-off"   // ECN bits rewritten to Not-ECT
	KindPFCOff    Kind = "pfc-off"   // PFC frames of a priority dropped
	KindDSCPMap   Kind = "dscp-map"  // DSCP rewritten a→b
	KindElephant  Kind = "elephant"  // background elephant flow
	KindIncast    Kind = "incast"    // background incast bursts
)

// Fault is one impairment instance. Link-direction faults are also
// Stages; traffic sources (PFC storm, background flows) are Generators.
type Fault interface {
	// Kind is the model.
	Kind() Kind
	// String gives the parameters in Spec syntax ("loss 1%").
	String() string
	// Collect emits the fault's counters (labelled kind=…).
	telemetry.Source
	// Close ends the fault: a Stage releases every packet it holds, in
	// order, to its next sink and passes everything through from then on;
	// a Generator stops sending. Close is idempotent.
	Close()
}

// Stage is a fault that sits on a link direction: a wire.Sink that
// forwards (or not) what it receives to the next sink — wrap, don't fork.
type Stage interface {
	Fault
	wire.Sink
	// SetNext sets where the stage forwards to. A Chain calls it when the
	// set of faults changes; packets a stage holds go to the sink that is
	// next when they leave.
	SetNext(next wire.Sink)
}

// Generator is a fault that produces traffic into a sink: a PFC storm or
// background flows. Start begins sending into out; Close stops.
type Generator interface {
	Fault
	Start(out wire.Sink)
}

// Counters are what every fault counts, in packets. Not every model uses
// every counter; all are emitted so that dashboards see zeros.
type Counters struct {
	Matched    int64 // packets that matched the fault's Match
	Dropped    int64 // dropped (loss, link down, queue overflow, PFC off)
	Corrupted  int64 // bits flipped, or dropped as corrupted (no bytes)
	Delayed    int64 // held for a positive delay
	Duplicated int64 // extra copies sent
	Reordered  int64 // held back past later packets
	Rewritten  int64 // header rewritten (ECN, DSCP, PFC class vector)
	Generated  int64 // packets a generator sent
}

// emit writes c as fault_packets_total{kind,event} samples.
func (c *Counters) emit(kind Kind, emit func(telemetry.Sample)) {
	for _, e := range [...]struct {
		name string
		v    int64
	}{
		{"matched", c.Matched}, {"dropped", c.Dropped}, {"corrupted", c.Corrupted},
		{"delayed", c.Delayed}, {"duplicated", c.Duplicated}, {"reordered", c.Reordered},
		{"rewritten", c.Rewritten}, {"generated", c.Generated},
	} {
		emit(telemetry.Sample{
			Name:   "fault_packets_total",
			Kind:   telemetry.Counter,
			Labels: []telemetry.Label{{Name: "kind", Value: string(kind)}, {Name: "event", Value: e.name}},
			Value:  float64(e.v),
		})
	}
}

// stage is the part every Stage shares: the next sink, the match, the
// counters, and the closed flag.
type stage struct {
	next   wire.Sink
	match  Match
	closed bool
	// C holds the counters; exported through Stats.
	c Counters
}

// SetNext sets the sink the stage forwards to.
func (s *stage) SetNext(next wire.Sink) { s.next = next }

// Stats returns a copy of the counters.
func (s *stage) Stats() Counters { return s.c }

// take reports whether the fault applies to p: not closed and matching.
// It counts the match.
func (s *stage) take(p *wire.Packet) bool {
	if s.closed || !s.match.Matches(p) {
		return false
	}
	s.c.Matched++
	return true
}

// drop counts a drop; the packet is not forwarded.
func (s *stage) drop() { s.c.Dropped++ }

// Close makes the stage pass everything through (a LinkFault: the link is
// up for good). A stage that holds packets (Delayer, Shaper) has its own
// Close that releases them first.
func (s *stage) Close() { s.closed = true }
