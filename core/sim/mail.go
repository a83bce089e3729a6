package sim

import (
	"fmt"

	"github.com/rocelab/rocelab/core/clock"
)

// A Ticket is an insertion sequence taken ahead of its use: by Reserve, or
// by Send for its letter. Inside a group's window it is provisional; Seq
// gives its final value once the window is over.
type Ticket struct {
	seq    uint64
	window uint64 // the group window it was taken in (provisional ones)
	eng    int
	final  bool
}

// Mail receives what another engine of the group sent it (Send).
type Mail interface {
	// Arrive is called once per letter on the group's own goroutine, at
	// the end of the window the letter was sent in (at once outside a
	// window), with the sender's ticket made final. It may Schedule and
	// ScheduleSeq on the receiving engine.
	Arrive(at clock.Time, arg any, sent Ticket)
}

// letter is a Send waiting for its window to end.
type letter struct {
	m   Mail
	at  clock.Time
	arg any
	seq uint64 // provisional in the sender
}

// Reserve takes the next insertion sequence without queueing anything: a
// model that, on one engine, would have scheduled an event here takes the
// same place in the order, so that an event it schedules later for the
// same reason (ScheduleSeq) runs where the one engine would have run it.
func (e *Engine) Reserve() Ticket {
	if e.grp != nil && e.grp.inWindow {
		return Ticket{seq: e.nextSeq(), window: e.grp.windows, eng: e.id}
	}
	return Ticket{seq: e.nextSeq(), final: true}
}

// Send hands (at, arg) to m, the receiving side of a model cut across
// engines, and takes a ticket for it as an insertion would. Inside a
// window the letter waits for the window's end, so at should lie at least
// the group's lookahead after Now; outside one, and on an engine outside a
// group, m.Arrive runs at once.
func (e *Engine) Send(m Mail, at clock.Time, arg any) {
	if e.grp == nil || !e.grp.inWindow {
		m.Arrive(at, arg, Ticket{seq: e.nextSeq(), final: true})
		return
	}
	if at < e.now.Add(e.grp.lookahead) {
		panic(fmt.Sprintf("sim: engine %d sent a letter due at %v, inside the lookahead %v after %v", e.id, at, e.grp.lookahead, e.now))
	}
	e.mail = append(e.mail, letter{m: m, at: at, arg: arg, seq: e.nextSeq()})
}

// Seq returns t's final insertion sequence. A provisional ticket of a
// window before the last one returns 0: everything of the last window
// comes after it, which is all a caller comparing it with a ticket of that
// window needs. Call it outside windows (from Mail.Arrive, or between
// runs).
func (e *Engine) Seq(t Ticket) uint64 {
	switch g := e.grp; {
	case t.final:
		return t.seq
	case g == nil || t.window == 0 || t.window != g.windows: // the zero Ticket too
		return 0
	default:
		return g.maps[t.eng][t.seq-g.base]
	}
}

// ScheduleSeq calls h.Handle(arg) at time t with the insertion sequence
// seq, a final one that Seq returned: the event runs where the one engine
// would have run the event the ticket stood for. Call it outside windows.
func (e *Engine) ScheduleSeq(t clock.Time, seq uint64, h Handler, arg any) {
	s := e.slot(payload{h: h, arg: arg})
	e.heap.push(key{at: max(t, e.now), ord: seq<<slotBits | uint64(s)})
}
