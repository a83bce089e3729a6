package emu

import (
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/wire"
)

// Dir is the direction of a tapped frame, seen from the port.
type Dir uint8

// Directions.
const (
	Rx Dir = iota // received by the port, delivered to the model
	Tx            // transmitted by the model out of the port
)

func (d Dir) String() string {
	if d == Tx {
		return "tx"
	}
	return "rx"
}

// Tap sees a port's frames, on the loop goroutine: received ones at the
// fabric time they are delivered to the model, transmitted ones at the
// fabric time the model sent them (before the link delay), with their
// bytes as written (MACs rewritten). frame is only valid during the call.
type Tap interface {
	Frame(dir Dir, at clock.Time, frame []byte)
}

// port is one port of a Loop: its socket, its link's delay and counters.
type port struct {
	l         *Loop
	idx       int
	name      string
	io        PortIO
	mac, peer [6]byte
	delay     clock.Duration
	keep      bool // Port.Keep
	// returns says the model gives back the bytes of the frames it
	// receives (TakeBack): they come in the loop's own buffers.
	returns bool
	trailer bool // Port.PeerLoop
	// link is the port at this link's other end when both are this
	// Loop's (Options.InLoopLinks): frames pass in memory.
	link    *port
	model   wire.Sink
	tap     Tap
	release func(*wire.Packet) // SetRelease

	// Receive side: descriptors waiting for the next read.
	rx      []*wire.Packet
	bufs    [][]byte
	lens    []int
	stamped StampedReader // io, when it tells receive times
	stamps  []int64

	// Transmit side: the batch to write at the end of the turn.
	out     [][]byte
	outPkts []*wire.Packet
	arena   []byte

	// lastDue is when the last frame read was delivered (or is due):
	// the next one is not delivered before it.
	lastDue clock.Time

	// onLink counts the frames read but not yet delivered: still on the
	// link, in fabric time (emu_delay_line_frames).
	onLink int64

	rxFrames, rxBytes, rxMalformed, rxErrors int64
	rxUnstamped, rxStampClamped              int64
	// rxSenderLate sums how late the peer Loop wrote the frames read
	// (their trailers; fabric time): the lateness the trailers took off
	// the link.
	rxSenderLate clock.Duration
	// rxTrailers counts the frames read that carried a trailer.
	rxTrailers int64
	// rxInLoop counts the frames that came over an in-loop link, from
	// the model at its other end (counted in rxFrames too).
	rxInLoop int64
	// rxLate counts the frames read after they were due (their receive
	// stamp plus the link's delay), rxLateBy sums by how much (fabric
	// time): the link's lateness as this end delivers it.
	rxLate   int64
	rxLateBy clock.Duration
	// rxBehindLead counts the frames read on time but due before the
	// engine's clock, which the last turn ran ahead (Options.Lead);
	// rxBehindLeadBy sums by how much (fabric time).
	rxBehindLead                          int64
	rxBehindLeadBy                        clock.Duration
	rxBatches, txBatches                  int64 // ReadBatch calls that returned frames, WriteBatch calls
	txFrames, txBytes, txErrors, txEncode int64
}

func newPort(l *Loop, i int, p Port) *port {
	pt := &port{
		l: l, idx: i, name: p.Name, io: p.IO, mac: p.MAC, peer: p.PeerMAC, delay: max(p.Delay, 0), keep: p.Keep, trailer: p.PeerLoop,
		rx:   make([]*wire.Packet, l.batch),
		bufs: make([][]byte, l.batch),
		lens: make([]int, l.batch),
	}
	if sr, ok := p.IO.(StampedReader); ok {
		pt.stamped, pt.stamps = sr, make([]int64, l.batch)
	}
	return pt
}

// read takes one batch of pending frames off the socket, decodes them and
// appends them, with their receive times, to l.arrivals, and reports
// whether the batch was full (more may be pending). A read error is
// counted, not fatal: the socket reports it once and goes on.
func (pt *port) read() (full bool) {
	l := pt.l
	copied := pt.keep && !pt.returns
	if copied {
		// An endpoint's port whose model keeps what it receives: read
		// into the loop's scratch buffers and copy each frame into a
		// buffer of its own length (see the package doc, "Buffer
		// ownership").
		copy(pt.bufs, l.scratchBufs())
	} else {
		for i, p := range pt.rx {
			if p == nil {
				p = l.get()
				pt.rx[i] = p
			}
			pt.bufs[i] = p.Raw[:cap(p.Raw)]
		}
	}
	var n int
	var err error
	if pt.stamped != nil {
		clear(pt.stamps)
		n, err = pt.stamped.ReadBatchStamped(pt.bufs, pt.lens, pt.stamps)
	} else {
		n, err = pt.io.ReadBatch(pt.bufs, pt.lens)
	}
	if err != nil {
		pt.rxErrors++
		return false
	}
	if n > 0 {
		pt.rxBatches++
	}
	for i := range n {
		f := pt.bufs[i][:pt.lens[i]]
		var late clock.Duration
		trailed := false
		if pt.trailer {
			var cut int
			if cut, late, trailed = cutTrailer(f); trailed {
				f = f[:cut]
			}
		}
		var p *wire.Packet
		if copied {
			p = &wire.Packet{}
			f = append(make([]byte, 0, len(f)), f...)
		} else {
			p = pt.rx[i]
		}
		if err := p.Decode(f); err != nil {
			pt.rxMalformed++
			continue // the descriptor stays for the next read
		}
		pt.rx[i] = nil
		pt.rxFrames++
		pt.rxBytes += int64(p.Len)
		pt.rxSenderLate += late
		if trailed {
			pt.rxTrailers++
		}
		var ns int64
		if pt.stamped != nil {
			ns = pt.stamps[i]
		}
		l.arrivals = append(l.arrivals, arrival{pt: pt, p: p, ns: ns, late: late})
	}
	return n == len(pt.rx)
}

// ingress delivers a received frame to the model; a separate type keeps
// Handle out of port's method set.
type ingress port

// Handle is the engine event of a frame's delivery.
func (in *ingress) Handle(arg any) {
	pt := (*port)(in)
	p := arg.(*wire.Packet)
	pt.onLink--
	if pt.tap != nil {
		pt.tap.Frame(Rx, pt.l.eng.Now(), p.Raw[:p.Len])
	}
	pt.model.Receive(p)
}

// egress is the sink the model transmits port's frames into.
type egress port

var _ wire.Sink = (*egress)(nil)

// Receive takes a frame whose last bit left the model's egress now; it is
// written to the socket at the end of the turn. The link's delay is the
// receiving end's (see deliver).
func (e *egress) Receive(p *wire.Packet) {
	pt := (*port)(e)
	pt.encode(p, pt.l.eng.Now())
}

// flush writes the turn's batch; each frame's trailer, if the port
// writes them, tells how late it leaves (fabric time now, read just
// before the write, less the time the model sent it).
func (pt *port) flush() {
	if len(pt.out) == 0 {
		return
	}
	extra := 0
	if pt.trailer {
		extra = trailerLen
		now := pt.l.fabricAt(time.Now())
		for _, f := range pt.out {
			stampTrailer(f, now)
		}
	}
	sent, err := pt.io.WriteBatch(pt.out)
	pt.txBatches++
	for _, f := range pt.out[:sent] {
		pt.txFrames++
		pt.txBytes += int64(len(f) - extra)
	}
	if err != nil || sent < len(pt.out) {
		pt.txErrors += int64(len(pt.out) - sent)
	}
	for _, p := range pt.outPkts {
		pt.giveBack(p)
	}
	clear(pt.out)
	clear(pt.outPkts)
	pt.out, pt.outPkts, pt.arena = pt.out[:0], pt.outPkts[:0], pt.arena[:0]
}

// zeros is the payload of descriptors that carry none in Raw.
var zeros [9216]byte

// encode adds p to the batch: Raw with its MACs rewritten, or serialized
// from the descriptor when there is no Raw. On an in-loop link (pass) the
// frame goes to the other end's model instead.
func (pt *port) encode(p *wire.Packet, sent clock.Time) {
	if pt.link != nil {
		pt.pass(p, sent)
		return
	}
	f, ok := pt.frame(p, sent)
	if !ok {
		return
	}
	if p.Raw != nil {
		pt.outPkts = append(pt.outPkts, p)
	}
	if pt.trailer {
		switch {
		case p.Raw == nil:
			// f is the arena's tail: the trailer follows it there.
			pt.arena = append(pt.arena, zeros[:trailerLen]...)
			f = pt.arena[len(pt.arena)-len(f)-trailerLen : len(pt.arena)-trailerLen : len(pt.arena)]
		case pt.keep && pt.release == nil || cap(f)-len(f) < trailerLen:
			// The model's own buffer, which it may still use, or no
			// room after the frame: the trailer goes on a copy. (A
			// model that takes its frames back once written, through
			// SetRelease, leaves room after them: Options.Tailroom of
			// endpoint.NIC.)
			start := len(pt.arena)
			pt.arena = append(append(pt.arena, f...), zeros[:trailerLen]...)
			f = pt.arena[start : start+len(f) : len(pt.arena)]
		}
		f = putTrailer(f, sent)
	}
	pt.out = append(pt.out, f)
}

// frame returns the bytes p leaves the port as: Raw with its MACs
// rewritten, or, without Raw, serialized into the port's arena with the
// port's source MAC. The tap sees them. ok is false (and counted) when p
// cannot be sent.
func (pt *port) frame(p *wire.Packet, sent clock.Time) (f []byte, ok bool) {
	p.SrcMAC = pt.mac
	if p.Raw != nil {
		f = p.Raw
		if p.Len < len(f) {
			f = f[:p.Len]
		}
		if len(f) < 12 {
			pt.txEncode++
			return nil, false
		}
		p.DstMAC = pt.peer
		copy(f[0:6], pt.peer[:])
		copy(f[6:12], pt.mac[:])
	} else {
		if p.Kind != wire.KindPFC && p.Kind != wire.KindPause {
			p.DstMAC = pt.peer
		}
		start := len(pt.arena)
		var err error
		if int(p.PayloadLen) > len(zeros) {
			pt.txEncode++
			return nil, false
		}
		pt.arena, err = wire.AppendFrame(pt.arena, p, zeros[:p.PayloadLen])
		if err != nil {
			pt.txEncode++
			return nil, false
		}
		f = pt.arena[start:len(pt.arena):len(pt.arena)]
	}
	if pt.tap != nil {
		pt.tap.Frame(Tx, sent, f)
	}
	return f, true
}
