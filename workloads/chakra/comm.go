package chakra

import (
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/workloads/chakra/etpb"
)

// Comm carries out the communication of a replay. The replay calls it only
// once every participant issued its part — every member of a collective,
// both ends of a message — so an implementation need not match anything:
// it runs the operation from Now (a simulator's collective engine over the
// group's ranks, say) and calls done once, on the scheduler's goroutine,
// when the operation completed on every participant. done may be called
// from inside the method.
type Comm interface {
	Collective(c *Collective, done func())
	Message(m *Message, done func())
}

// Collective is one collective matched across its group: the Seq-th
// collective (from 0) that each member issued in the group.
type Collective struct {
	Group string
	Seq   int
	Type  etpb.CollectiveCommType
	Ranks []int     // the group's members, ascending
	Nodes []NodeRef // each member's node, as Ranks
	Sizes []int64   // each member's comm_size, as Ranks
}

// Size returns the largest of the members' sizes (they are equal in traces
// from real runs).
func (c *Collective) Size() int64 {
	var s int64
	for _, v := range c.Sizes {
		s = max(s, v)
	}
	return s
}

// Message is one point-to-point message: the Seq-th send from Src to Dst
// with Tag, matched with the Seq-th receive of the same triple.
type Message struct {
	Src, Dst int
	Tag      int64
	Seq      int
	Size     int64 // the send's comm_size
	Send     NodeRef
	Recv     NodeRef
}

// IdealComm is the reference Comm: each operation takes the time Cost
// gives, from the moment it is handed over, with no contention between
// operations.
type IdealComm struct {
	Sched clock.Scheduler
	// Cost returns how long an operation of kind (Coll or Send) and size
	// bytes takes; typ is the collective's type (ALL_REDUCE for a message).
	Cost func(kind Kind, typ etpb.CollectiveCommType, size int64, ranks int) clock.Duration
}

var _ Comm = (*IdealComm)(nil)

// Collective completes c after Cost(Coll, c.Type, c.Size(), len(c.Ranks)).
func (i *IdealComm) Collective(c *Collective, done func()) {
	i.Sched.AfterFunc(i.Cost(Coll, c.Type, c.Size(), len(c.Ranks)), done)
}

// Message completes m after Cost(Send, ALL_REDUCE, m.Size, 2).
func (i *IdealComm) Message(m *Message, done func()) {
	i.Sched.AfterFunc(i.Cost(Send, etpb.CollectiveCommType_ALL_REDUCE, m.Size, 2), done)
}
