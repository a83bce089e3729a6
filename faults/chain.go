package faults

import (
	"fmt"
	"strconv"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/wire"
)

// ID identifies a fault in a Chain or an Injector.
type ID uint64

// String formats id as f1, f2, …
func (id ID) String() string { return "f" + strconv.FormatUint(uint64(id), 10) }

// ParseID reads f1 (or 1) back.
func ParseID(s string) (ID, error) {
	if len(s) > 0 && (s[0] == 'f' || s[0] == 'F') {
		s = s[1:]
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("fault id %q: want f1, f2, …", s)
	}
	return ID(n), nil
}

// Entry is one fault of a Chain.
type Entry struct {
	ID    ID
	Fault Fault
}

// Chain is the sink that holds the faults of one link direction: it wraps
// the sink the direction transmits into (out) and can take faults on and
// off while the lab runs. Stages apply in the order they were added, the
// first added first; generators send into the chain itself, so the
// stages apply to their frames too.
//
// A Chain with no stages calls out.Receive directly and adds no event: it
// is byte- and timing-identical to no chain. Removing a stage closes it
// (it releases any packets it holds, in order, into what followed it) and
// relinks its neighbours, so clearing every fault restores the exact
// pass-through.
type Chain struct {
	out     wire.Sink
	head    wire.Sink
	entries []Entry
	nextID  ID
	labels  []telemetry.Label
}

var (
	_ wire.LaunchSink  = (*Chain)(nil)
	_ telemetry.Source = (*Chain)(nil)
)

// NewChain returns an empty chain into out; labels prefix its faults'
// samples (target=leaf1:p3, say).
func NewChain(out wire.Sink, labels ...telemetry.Label) *Chain {
	return &Chain{out: out, head: out, labels: labels}
}

// Receive hands p to the first stage, or to out when there is none.
func (c *Chain) Receive(p *wire.Packet) { c.head.Receive(p) }

// Launch takes p early (wire.LaunchSink) only while the chain has no stage
// and out can: stages act when a frame is on the wire, so with any of them
// the transmitter must call Receive then. A stage added while a launched
// frame is still being sent does not see that frame.
func (c *Chain) Launch(p *wire.Packet, end clock.Time) bool {
	if c.head != c.out {
		return false
	}
	l, ok := c.out.(wire.LaunchSink)
	return ok && l.Launch(p, end)
}

// Out returns the sink the chain wraps.
func (c *Chain) Out() wire.Sink { return c.out }

// Add puts f on the chain under the next free ID and returns it. A Stage
// is linked in last; a Generator is started into the chain. Any other
// Fault is an error.
func (c *Chain) Add(f Fault) (ID, error) {
	id := c.nextID + 1
	return id, c.AddAs(id, f)
}

// AddAs is Add under a caller-chosen ID (an Injector's, shared by the
// chains one fault spans); it fails if id is 0 or taken.
func (c *Chain) AddAs(id ID, f Fault) error {
	switch f.(type) {
	case Stage, Generator:
	default:
		return fmt.Errorf("fault %s is neither a stage nor a generator", f)
	}
	if id == 0 || c.Fault(id) != nil {
		return fmt.Errorf("fault id %s taken", id)
	}
	c.nextID = max(c.nextID, id)
	c.entries = append(c.entries, Entry{ID: id, Fault: f})
	if _, ok := f.(Stage); ok {
		c.relink()
	}
	if g, ok := f.(Generator); ok {
		g.Start(c)
	}
	return nil
}

// Remove closes the fault id and takes it off; false if there is none.
func (c *Chain) Remove(id ID) bool {
	for i, e := range c.entries {
		if e.ID == id {
			e.Fault.Close()
			c.entries = append(c.entries[:i:i], c.entries[i+1:]...)
			c.relink()
			return true
		}
	}
	return false
}

// Clear removes every fault, first added first, and returns how many
// there were.
func (c *Chain) Clear() int {
	n := len(c.entries)
	for len(c.entries) > 0 {
		c.Remove(c.entries[0].ID)
	}
	return n
}

// Faults returns the chain's faults in order.
func (c *Chain) Faults() []Entry { return append([]Entry(nil), c.entries...) }

// Fault returns the fault id, or nil.
func (c *Chain) Fault(id ID) Fault {
	for _, e := range c.entries {
		if e.ID == id {
			return e.Fault
		}
	}
	return nil
}

// relink points every stage at the next one and the last at out.
func (c *Chain) relink() {
	next := c.out
	for i := len(c.entries) - 1; i >= 0; i-- {
		if s, ok := c.entries[i].Fault.(Stage); ok {
			s.SetNext(next)
			next = s
		}
	}
	c.head = next
}

// Collect emits every fault's samples with the chain's labels and
// fault=<id>.
func (c *Chain) Collect(emit func(telemetry.Sample)) {
	for _, e := range c.entries {
		lab := telemetry.With(c.labels, telemetry.Label{Name: "fault", Value: e.ID.String()})
		e.Fault.Collect(func(s telemetry.Sample) {
			s.Labels = telemetry.With(lab, s.Labels...)
			emit(s)
		})
	}
}
