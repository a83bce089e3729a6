package switchmodel

import (
	"math"
	"strconv"
	"unsafe"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/internal/prefetch"
	"github.com/rocelab/rocelab/wire"
)

// Port is one switch port: its Receive is the ingress (accounted per
// priority group), and its egress holds eight queues served at the port's
// line rate into whatever is attached.
//
// The fields are laid out by cache line, for the simulator, where a
// 1,024-host fabric's ports do not fit in cache and each line a hop
// touches is a miss (docs/performance.md, "Where the time goes"): a
// packet's hop reads the egress line of the port it leaves by and the
// ingress line of the port it came in by, not both lines of both. A
// priority group is one line, a queue two (what a packet touches, then its
// counters); what only pauses, the watchdog and trimming touch lives
// apart (classCtl). Ports are allocated on a line (linedPort), so the
// offsets are the lines (TestPortLayout holds them).
type Port struct {
	// Line 0, the egress: what starting a transmission touches.
	sw        *Switch
	launch    wire.LaunchSink // out, when it takes frames at launch
	rate      clock.Rate
	tx        *wire.Packet // the frame on the wire, unless out took it at launch
	busyUntil clock.Time   // when the frame in progress ends
	txBytes   int64
	busy      bool
	armed     bool // a txDone event is in the scheduler
	linked    bool // out is set
	// pfcPending says some PG has state to signal upstream.
	pfcPending bool
	refreshArm bool
	ready      uint8 // bit tc: queue tc holds packets and is not paused
	dwrrCur    uint8 // position in Switch.dwrr
	// dwrrDirty has bit tc set when class tc may have a visit in progress
	// or a deficit (a superset: clear means neither; see pick).
	dwrrDirty uint8

	// Line 1, the ingress: what receiving a packet touches, the switch
	// again (swRx is sw) so that the ingress does not read line 0.
	swRx            *Switch
	rxPkts, rxBytes int64
	idx             int
	pfcTx, pfcRx    int64
	txDoneFn        func()
	refreshFn       func()

	// Line 2: cold.
	out   wire.Sink
	label string
	drops *dropTable       // nil until the port drops something
	ctls  *[NumTC]classCtl // nil until the port needs them (ctl)
	// replies counts the control plane's answers to packets that came
	// in on this port (see punt).
	replies int64
	_       [8]byte

	pg [NumTC]pg
	q  [NumTC]queue
}

// queue is one egress traffic class of a port, two cache lines: the
// first holds what queueing and serving a packet touch, the second its
// counters and ECN (see Port); pause and watchdog state live apart
// (classCtl).
type queue struct {
	fifo
	quantum  int32
	deficit  int32
	peakPkts int32
	visited  bool
	paused   bool
	storm    bool
	ecnMarks int64

	ecn                      wred
	enqPkts, txPkts, txBytes int64
	peakBytes                int64
}

// classCtl is what a class of a port keeps of pauses, the watchdog and
// trimming: on the egress, of the pauses received and the queue's
// watchdog; on the ingress, of the pauses its PG asked for. A port makes
// its eight at its first pause frame in either direction, trim or
// watchdog check (Port.ctl): most ports of a large fabric never see one,
// and inline they were 1.5 KiB of every port.
type classCtl struct {
	// The PG's pauses of the upstream: since when (while xoff), in all,
	// and the frames sent.
	xoffSince             clock.Time
	xoffTotal             clock.Duration
	xoffFrames, xonFrames int64

	// Pause received from downstream. The callbacks are made at the
	// queue's first pause (Port.timerFns).
	pausedUntil clock.Time
	pausedSince clock.Time
	pausedTotal clock.Duration
	pauseTimer  clock.Timer
	expireFn    func()

	// Watchdog.
	wdTimer   clock.Timer
	wdFn      func()
	recoverFn func()

	trims                int64
	pfcRx, pfcIgnored    int64
	wdEvents, wdRestores int64
}

var _ wire.Sink = (*Port)(nil)

// dropReason says why a packet was dropped.
type dropReason uint8

// Drop reasons. Ingress-side reasons are counted on the ingress port under
// the packet's priority group, egress-side ones on the egress port under
// its queue.
const (
	dropIngress     dropReason = iota // ingress: PG over its shared threshold (lossy)
	dropNoHeadroom                    // ingress: lossless PG out of headroom
	dropTTL                           // ingress: TTL expired
	dropNoRoute                       // ingress: no route, or nothing to route on
	dropOversize                      // ingress: longer than the MTU
	dropToSwitch                      // ingress: addressed to the switch, and not answered
	dropEgressLimit                   // egress: lossy queue over EgressQueueLimit
	dropWRED                          // egress: WRED drop of a Not-ECT packet
	dropWatchdog                      // egress: PFC watchdog drop
	dropNoLink                        // egress: nothing attached to the port
	numReasons
)

var reasonNames = [numReasons]string{
	"ingress_admission", "no_headroom", "ttl", "no_route", "oversize",
	"to_switch", "egress_limit", "wred", "watchdog", "no_link",
}

func (r dropReason) String() string { return reasonNames[r] }

type dropCount struct{ pkts, bytes int64 }

// linedPort puts a Port on a cache line boundary. Go's allocator hands
// out an object of this size with pointers behind an 8-byte header (the
// object's type, at the start of its slot) in a size class that is a
// multiple of 64 bytes: the slot starts a line, the object 8 bytes into
// it, and the Port 64 bytes into it. TestPortLayout fails if that stops
// being true.
type linedPort struct {
	_ [56]byte
	Port
}

func newPort(s *Switch, idx int, spec PortSpec) *Port {
	h := new(linedPort)
	pt := &h.Port
	*pt = Port{sw: s, swRx: s, idx: idx, label: strconv.Itoa(idx), rate: spec.Rate}
	pt.txDoneFn = pt.txDone
	pt.refreshFn = pt.refresh
	cfg := &s.cfg
	for i := range NumTC {
		g := &pt.pg[i]
		if cfg.PFC.LosslessPriorities.Has(i) {
			g.lossless = true
			h := cfg.PFC.Headroom
			if h == 0 {
				h = HeadroomFor(spec.Rate, spec.Delay, cfg.MTU)
			}
			g.headroom = int32(min(h, math.MaxInt32))
		}
		q := &pt.q[i]
		q.ecn = newWRED(cfg.ECN[i], spec.Rate)
		w := cfg.Sched.Weights[i]
		if w <= 0 {
			w = 1
		}
		q.quantum = int32(w * cfg.Sched.Quantum)
	}
	return pt
}

// timerFns makes queue i's timer callbacks at its first pause: most
// queues of a large fabric are never paused, and three closures for each
// of a 1,024-host fabric's 49,000 queues were 2.4 MB.
func (pt *Port) timerFns(i int) *classCtl {
	c := pt.ctl(i)
	if c.expireFn == nil {
		c.expireFn = func() { pt.pauseExpired(i) }
		c.wdFn = func() { pt.watchdogCheck(i) }
		c.recoverFn = func() { pt.watchdogRecover(i) }
	}
	return c
}

// ctl returns class i's pause, watchdog and trim state, making the
// port's at first use.
func (pt *Port) ctl(i int) *classCtl {
	if pt.ctls == nil {
		pt.ctls = new([NumTC]classCtl)
	}
	return &pt.ctls[i]
}

// ctlView returns class i's pause, watchdog and trim state for reading:
// zero before the port made it.
func (pt *Port) ctlView(i int) classCtl {
	if pt.ctls == nil {
		return classCtl{}
	}
	return pt.ctls[i]
}

// Index returns the port's number on its switch.
func (pt *Port) Index() int { return pt.idx }

// Rate returns the port's line rate.
func (pt *Port) Rate() clock.Rate { return pt.rate }

var _ wire.ReceivePrefetcher = (*Port)(nil)

// PrefetchReceive asks for the port's ingress line, which Receive reads
// first beside the packet (wire.ReceivePrefetcher).
func (pt *Port) PrefetchReceive(*wire.Packet) {
	prefetch.Line(unsafe.Pointer(&pt.swRx))
}

// Receive takes a frame that arrived on this port (its last bit, at the
// scheduler's Now). PFC and PAUSE frames act on this port's egress and go
// no further; everything else is classified, routed and queued.
func (pt *Port) Receive(p *wire.Packet) {
	s := pt.swRx
	pt.rxPkts++
	pt.rxBytes += int64(p.Len)
	switch p.Kind {
	case wire.KindPFC:
		pt.receivePFC(p)
		return
	case wire.KindPause:
		pt.receivePause(p)
		return
	}
	tc := s.classify(p)
	g := &pt.pg[tc]
	g.rxPkts++
	g.rxBytes += int64(p.Len)
	if p.Len > s.cfg.MTU {
		pt.drop(tc, dropOversize, p)
		return
	}
	out, ok := s.route(p)
	if !ok || out == localPort {
		if ok || s.forControl(p) {
			pt.punt(tc, p)
			return
		}
		pt.drop(tc, dropNoRoute, p)
		return
	}
	if p.IPVersion != 0 {
		if p.TTL <= 1 {
			pt.drop(tc, dropTTL, p)
			return
		}
		p.TTL--
		if p.Raw != nil {
			p.WriteTTL()
		}
	}
	s.ports[out].enqueue(p, pt, tc)
}

// classify returns p's traffic class (also its PFC priority and ingress PG).
func (s *Switch) classify(p *wire.Packet) uint8 {
	switch {
	case p.Kind == wire.KindCNP:
		return s.cfg.CNPClass
	case p.HasVLAN && (s.cfg.TrustPCP || !p.DstIP.IsValid()):
		return s.cfg.PCPToTC[p.PCP&7]
	case p.DstIP.IsValid():
		return s.cfg.DSCPToTC[p.DSCP&63]
	}
	return 0
}

// enqueue admits p, which came in through in with class tc, into egress
// queue tc of eg, or drops (or trims) it.
func (eg *Port) enqueue(p *wire.Packet, in *Port, tc uint8) {
	s := eg.sw
	if !eg.linked {
		eg.drop(tc, dropNoLink, p)
		return
	}
	q := &eg.q[tc]
	if q.storm && s.cfg.PFC.Watchdog.Action == WatchdogDrop {
		eg.drop(tc, dropWatchdog, p)
		return
	}
	n := int64(p.Len)
	g := &in.pg[tc]
	w := s.mmu.admit(g, n)
	if w == refused || (!g.lossless && s.cfg.EgressQueueLimit > 0 && q.bytes+n > s.cfg.EgressQueueLimit) {
		if s.cfg.Trim.Classes.Has(int(tc)) && eg.trim(p, in, tc) {
			return
		}
		switch {
		case w != refused:
			eg.drop(tc, dropEgressLimit, p)
		case g.lossless:
			in.drop(tc, dropNoHeadroom, p)
		default:
			in.drop(tc, dropIngress, p)
		}
		return
	}
	if q.ecn.enabled && !q.ecn.atDequeue && s.wredHit(&q.ecn, q.bytes) && !s.markCEOn(q, p) {
		eg.drop(tc, dropWRED, p)
		return
	}
	s.mmu.charge(g, n, w)
	eg.push(tc, entry{p: p, size: int32(n), in: uint16(in.idx), pg: tc})
	in.checkXoff(int(tc))
	eg.kick()
}

// push queues e in class tc and keeps the queue's peaks.
func (eg *Port) push(tc uint8, e entry) {
	q := &eg.q[tc]
	q.push(e)
	eg.update(int(tc))
	q.enqPkts++
	q.peakBytes = max(q.peakBytes, q.bytes)
	q.peakPkts = max(q.peakPkts, q.n)
}

// dropTable counts a port's drops by class and reason. It lives outside
// Port, allocated at the first drop: 1,152 bytes of counters that most
// ports never touch, which inline made every Port four cache lines per
// kilobyte bigger (a 1,024-host fabric has about 5,000 ports).
type dropTable [NumTC][numReasons]dropCount

// dropped returns the port's drops of class tc for reason r.
func (pt *Port) dropped(tc int, r dropReason) dropCount {
	if pt.drops == nil {
		return dropCount{}
	}
	return pt.drops[tc][r]
}

func (pt *Port) drop(tc uint8, r dropReason, p *wire.Packet) {
	if pt.drops == nil {
		pt.drops = new(dropTable)
	}
	d := &pt.drops[tc][r]
	d.pkts++
	d.bytes += int64(p.Len)
}
