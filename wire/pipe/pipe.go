// Package pipe is the simulator's wire: a one-way in-memory link with a
// constant propagation delay, run on the discrete-event engine (core/sim).
// It is htsim's Pipe: serialization belongs to the sender's egress port,
// the pipe only delays.
package pipe

import (
	"unsafe"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/internal/prefetch"
	"github.com/rocelab/rocelab/wire"
)

// Pipe is a one-way in-memory link with a constant propagation delay:
// Receive(p) delivers p to the link's sink at Now+Delay. Packets leave in
// the order they entered. Serialization is not the link's job — the
// sender's egress port models it; the link only delays.
//
// Because the delay is constant, in-flight packets are kept in a FIFO ring
// and the link has at most one event in the engine, for the head packet;
// that is cheaper than one heap event per packet.
//
// A Pipe is three cache lines, and a hop touches two: the first holds
// everything putting a packet on the link and delivering it read, the
// second the ring's first slots. The ring is a pointer and a mask, not a
// slice, so that the first line has room for it. Pipes are 192 bytes, a
// size class of Go's allocator whose objects start on a line
// (TestPipeLayout).
type Pipe struct {
	e     *sim.Engine // the receiving side's
	src   *sim.Engine // the sending side's: e, or another engine of its group
	to    wire.Sink
	delay clock.Duration
	// ring is the first of mask+1 slots (a power of two): inline's, or
	// the array grow made, which ring alone keeps alive. head indexes the
	// oldest of the n packets in flight. An event for the head packet is
	// in the engine exactly when n > 0.
	ring    unsafe.Pointer
	mask    uint32
	head, n uint32
	// inline is the ring's first storage, inside the Pipe so that the
	// packets in flight share the link's cache lines (a short link at
	// 100–400G holds a few).
	inline [4]inflight
	// idle is the place in the order its last delivery took when it found
	// the ring empty (a pipe across engines; see NewAcross).
	idle sim.Ticket
	_    [32]byte
}

type inflight struct {
	p  *wire.Packet
	at clock.Time
}

var _ wire.LaunchSink = (*Pipe)(nil)

// New returns a pipe on e that delays packets by delay (negative means
// 0) and hands them to to. to may be nil if SetTo is called before the
// first packet arrives at the far end.
func New(e *sim.Engine, delay clock.Duration, to wire.Sink) *Pipe {
	l := &Pipe{e: e, src: e, delay: max(delay, 0), to: to}
	l.ring, l.mask = unsafe.Pointer(&l.inline[0]), uint32(len(l.inline)-1)
	return l
}

// NewAcross returns a link from a model on engine src to a sink on engine
// dst, two engines of one sim.Group cut along this link: delay must be at
// least the group's lookahead. Its deliveries run exactly where they
// would on one engine: a packet sent into an idle link is delivered by an
// event in the sender's place in the order, one sent behind another by an
// event in the previous delivery's place. The sender's side only posts the
// packet (sim.Engine.Send); the receiving side keeps the ring, and its
// deliveries reserve their place in the order even when nothing follows,
// so a packet that arrives at the window's end takes the later of the two
// places.
func NewAcross(src, dst *sim.Engine, delay clock.Duration, to wire.Sink) *Pipe {
	l := New(dst, delay, to)
	l.src = src
	return l
}

// SetTo sets the sink the link delivers to, to wire up cycles between
// nodes after construction.
func (l *Pipe) SetTo(to wire.Sink) { l.to = to }

// Delay returns the link's propagation delay.
func (l *Pipe) Delay() clock.Duration { return l.delay }

// InFlight returns how many packets are on the link.
func (l *Pipe) InFlight() int { return int(l.n) }

// slot returns ring slot i (taken modulo the ring's size).
func (l *Pipe) slot(i uint32) *inflight {
	return (*inflight)(unsafe.Add(l.ring, uintptr(i&l.mask)*unsafe.Sizeof(inflight{})))
}

// Receive puts p on the link; it is delivered at Now+Delay.
func (l *Pipe) Receive(p *wire.Packet) { l.Launch(p, l.src.Now()) }

// Launch puts p on the link as if its last bit entered it at end, which
// may lie in the future: p is delivered at end+Delay (wire.LaunchSink). A
// transmitter that knows when its serialization ends (a switch port) hands
// the frame over when it starts, and so spends no event on the end of the
// transmission. Calls must come in nondecreasing end, as a transmitter's
// frames do; an end before Now counts as Now. It always takes p.
func (l *Pipe) Launch(p *wire.Packet, end clock.Time) bool {
	l.put(p, end)
	return true
}

func (l *Pipe) put(p *wire.Packet, t clock.Time) {
	if l.src != l.e {
		l.src.Send((*receiving)(l), max(t, l.src.Now()).Add(l.delay), p)
		return
	}
	if l.n > l.mask {
		l.grow()
	}
	at := max(t, l.e.Now()).Add(l.delay)
	*l.slot(l.head + l.n) = inflight{p: p, at: at}
	l.n++
	if l.n == 1 {
		l.e.Schedule(at, (*linkHead)(l), nil)
	}
}

func (l *Pipe) grow() {
	r := make([]inflight, 2*(l.mask+1))
	for i := range l.n {
		r[i] = *l.slot(l.head + i)
	}
	l.ring, l.mask, l.head = unsafe.Pointer(&r[0]), uint32(len(r)-1), 0
}

// linkHead is the Handler of a link's head-packet event; a separate type
// keeps Handle out of Pipe's method set.
type linkHead Pipe

// Handle delivers the head packet and arms the event for the next one
// before delivering, so a sink that sends back into this link sees a
// consistent state.
func (h *linkHead) Handle(any) {
	l := (*Pipe)(h)
	s := l.slot(l.head)
	it := *s
	*s = inflight{}
	l.head = (l.head + 1) & l.mask
	l.n--
	if l.n > 0 {
		l.e.Schedule(l.slot(l.head).at, h, nil)
	} else if l.src != l.e {
		l.idle = l.e.Reserve()
	}
	l.to.Receive(it.p)
}

// Prefetch asks for what delivering the head packet reads first: its
// descriptor, and the sink's receive state when the sink says which
// (wire.ReceivePrefetcher) (sim.Prefetcher).
func (h *linkHead) Prefetch(any) {
	l := (*Pipe)(h)
	if l.n == 0 {
		return
	}
	p := l.slot(l.head).p
	prefetch.Line(unsafe.Pointer(p))
	if pf, ok := l.to.(wire.ReceivePrefetcher); ok {
		pf.PrefetchReceive(p)
	}
}

// receiving is the receiving side of a pipe across engines.
type receiving Pipe

// Arrive queues a packet the sending side posted: behind the ring, or, on
// an idle link, as the head with the later of the sender's place and the
// last delivery's.
func (a *receiving) Arrive(at clock.Time, arg any, sent sim.Ticket) {
	l := (*Pipe)(a)
	if l.n > l.mask {
		l.grow()
	}
	*l.slot(l.head + l.n) = inflight{p: arg.(*wire.Packet), at: at}
	l.n++
	if l.n == 1 {
		l.e.ScheduleSeq(at, max(l.e.Seq(sent), l.e.Seq(l.idle)), (*linkHead)(l), nil)
	}
}
