package switchmodel

import (
	"math/bits"

	"github.com/rocelab/rocelab/wire"
)

// kick starts the next transmission if the port is idle: a pending PFC
// frame first (ahead of data, but never preempting the frame on the wire),
// then the strict classes, highest first, then DWRR among the others.
// Paused classes are not eligible.
func (pt *Port) kick() {
	if !pt.linked {
		return
	}
	s := pt.sw
	if pt.busy {
		if pt.tx != nil || s.sched.Now() < pt.busyUntil {
			pt.armEnd()
			return
		}
		pt.busy = false // a launched frame's last bit has left
	}
	var p *wire.Packet
	var e entry
	fromQueue := false
	if pt.pfcPending {
		p = pt.buildPFC()
	} else {
		for {
			tc := pt.pick()
			if tc < 0 {
				return
			}
			q := &pt.q[tc]
			e = q.pop()
			pt.update(tc)
			s.mmu.release(&s.ports[e.in].pg[e.pg], int64(e.size))
			if q.ecn.enabled && q.ecn.atDequeue && !e.trimmed &&
				s.wredHit(&q.ecn, q.bytes) && !s.markCEOn(q, e.p) {
				pt.drop(uint8(tc), dropWRED, e.p)
				s.ports[e.in].checkXon(int(e.pg))
				continue
			}
			q.txPkts++
			q.txBytes += int64(e.size)
			p = e.p
			fromQueue = true
			break
		}
	}
	// A queued frame's length is its entry's size (the switch sets both
	// at admission and changes neither while the frame waits): a
	// transmission does not read the descriptor, which has long left the
	// cache when its queue was deep.
	size := int(e.size)
	if !fromQueue {
		size = p.Len
	}
	pt.busy = true
	pt.txBytes += int64(size)
	pt.busyUntil = s.sched.Now().Add(pt.rate.Serialize(wire.OnWireBytes(size)))
	if pt.launch != nil && pt.launch.Launch(p, pt.busyUntil) {
		// The link took the frame now and delivers it when its last
		// bit has left plus the propagation delay; the end of this
		// transmission needs an event only if something waits for it.
		if pt.ready != 0 || pt.pfcPending {
			pt.armEnd()
		}
	} else {
		pt.tx = p
		pt.armEnd()
	}
	if fromQueue {
		// After busy is set: releasing may send XON out of any port,
		// this one included.
		s.ports[e.in].checkXon(int(e.pg))
	}
}

// armEnd schedules txDone at the end of the transmission in progress,
// once.
func (pt *Port) armEnd() {
	if pt.armed {
		return
	}
	pt.armed = true
	s := pt.sw
	if s.fast != nil {
		s.fast.ScheduleAfter(pt.busyUntil.Sub(s.sched.Now()), (*portTx)(pt), nil)
	} else {
		s.sched.AfterFunc(pt.busyUntil.Sub(s.sched.Now()), pt.txDoneFn)
	}
}

// portTx is the Handler of a port's end-of-transmission event; a separate
// type keeps Handle out of Port's method set.
type portTx Port

// Handle is txDone.
func (h *portTx) Handle(any) { (*Port)(h).txDone() }

// txDone hands the frame whose last bit just left to the attached sink and
// starts the next one.
func (pt *Port) txDone() {
	pt.armed = false
	if pt.busy && pt.tx == nil && pt.sw.sched.Now() < pt.busyUntil {
		// A frame arriving at the very end of the last transmission
		// launched the next one before this event ran: wait for that.
		pt.armEnd()
		return
	}
	p := pt.tx
	pt.tx = nil
	pt.busy = false
	if p != nil && pt.out != nil {
		pt.out.Receive(p)
	}
	pt.kick()
}

// update refreshes class tc's bit in the port's ready mask.
func (pt *Port) update(tc int) {
	if q := &pt.q[tc]; q.n > 0 && !q.paused {
		pt.ready |= 1 << uint(tc)
	} else {
		pt.ready &^= 1 << uint(tc)
	}
}

func (pt *Port) eligible(tc uint8) bool { return pt.ready&(1<<tc) != 0 }

// pick returns the class to serve next, or -1. DWRR (Shreedhar & Varghese)
// in wire bytes: a class visited afresh gets its quantum (weight ×
// Quantum) added to its deficit and sends head packets while they fit; an
// empty class loses its deficit, a paused one keeps it.
//
// A class that is not eligible and has neither a visit in progress nor a
// deficit (its bit clear in dwrrDirty) would be passed over without a
// change, so pick passes it over without reading its queue: a port with
// one busy class does not touch the cache lines of the seven others.
func (pt *Port) pick() int {
	if pt.ready == 0 {
		return -1
	}
	s := pt.sw
	if st := pt.ready & uint8(s.cfg.Sched.Strict); st != 0 {
		return 7 - bits.LeadingZeros8(st) // highest strict class
	}
	n := uint8(len(s.dwrr))
	for {
		tc := s.dwrr[pt.dwrrCur]
		bit := uint8(1) << tc
		switch {
		case pt.ready&bit != 0:
			q := &pt.q[tc]
			if !q.visited {
				q.deficit += q.quantum
				q.visited = true
				pt.dwrrDirty |= bit
			}
			if size := int32(wire.OnWireBytes(int(q.front().size))); size <= q.deficit { // size is p.Len, kept in the entry
				q.deficit -= size
				return int(tc)
			}
			q.visited = false
		case pt.dwrrDirty&bit != 0:
			q := &pt.q[tc]
			if q.n == 0 {
				q.deficit = 0
			}
			q.visited = false
			if q.deficit == 0 {
				pt.dwrrDirty &^= bit
			}
		}
		pt.dwrrCur++
		if pt.dwrrCur == n {
			pt.dwrrCur = 0
		}
	}
}
