package emu

import (
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/wire"
)

// joinInLoopLinks pairs the ports whose two ends are both ports of this
// Loop (port i's PeerMAC is port j's MAC and the other way round): with
// Options.InLoopLinks their frames go from one model to the other in
// memory (see the package doc, "Links inside a loop"). A MAC that
// several ports share is ambiguous: their links keep their sockets.
func (l *Loop) joinInLoopLinks() {
	byMAC := make(map[[6]byte]*port, len(l.ports))
	shared := map[[6]byte]bool{}
	for _, p := range l.ports {
		if _, dup := byMAC[p.mac]; dup {
			shared[p.mac] = true
		}
		byMAC[p.mac] = p
	}
	for _, p := range l.ports {
		q := byMAC[p.peer]
		if q == nil || q == p || q.peer != p.mac || shared[p.mac] || shared[q.mac] {
			continue
		}
		p.link = q
	}
}

// pass carries a frame the model sent on an in-loop port to the model
// of the port at the link's other end: it is delivered there the other
// end's delay after sent, as the simulator's pipe does, without a system
// call or a wake-up. The frame is encoded as a socket write would see it
// (MACs rewritten; a PFC frame serialized), so taps on both ends see the
// bytes a capture of the veth would, and decoded on the other side into
// a descriptor of the kind that end reads (the loop's own, or one of the
// frame's length for an endpoint's port); the sender's descriptor goes
// back to its owner at once.
func (pt *port) pass(p *wire.Packet, sent clock.Time) {
	l, to := pt.l, pt.link
	f, ok := pt.frame(p, sent)
	if !ok {
		return
	}
	pt.txFrames++
	pt.txBytes += int64(len(f))
	var q *wire.Packet
	switch {
	case !pt.keep && p.Raw != nil && cap(p.Raw) == l.bufSize && (!to.keep || to.returns):
		// The loop's own descriptor, already holding the bytes: it
		// changes hands.
		q = p
	case to.keep && !to.returns:
		q = &wire.Packet{}
		f = append(make([]byte, 0, len(f)), f...)
	default:
		q = l.get()
		f = q.Raw[:copy(q.Raw[:cap(q.Raw)], f)]
	}
	if q != p && p.Raw != nil {
		pt.giveBack(p)
	}
	pt.arena = pt.arena[:0]
	if err := q.Decode(f); err != nil {
		to.rxMalformed++
		l.put(q)
		return
	}
	to.rxFrames++
	to.rxBytes += int64(q.Len)
	to.rxInLoop++
	t := max(sent.Add(to.delay), to.lastDue)
	to.lastDue = t
	to.onLink++
	l.eng.Schedule(t, (*ingress)(to), q)
}

// giveBack returns a descriptor the model transmitted to its owner once
// its bytes are no longer needed: the loop's free list, or the model
// through SetRelease (see the package doc, "Buffer ownership").
func (pt *port) giveBack(p *wire.Packet) {
	switch {
	case !pt.keep:
		pt.l.put(p)
	case pt.release != nil:
		pt.release(p)
	}
}
