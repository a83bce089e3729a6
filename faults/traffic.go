package faults

import (
	"fmt"
	"net/netip"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/wire"
)

// Traffic defaults.
const (
	DefaultTrafficSize   = 1024     // frame bytes (Len)
	DefaultTrafficDSCP   = 26       // RoCE data, lossless priority 3 in the reference profile
	DefaultTrafficPrio   = 3        // the PFC priority the source obeys
	DefaultTrafficSport  = 49152    // UDP source port (flow entropy)
	DefaultTrafficQP     = 0xFFFFFE // destination QP: none a receiver opened
	rocePort             = 4791
	opRCSendOnly         = 0x04
	defaultTrafficIPv4TT = 64
)

// Traffic is background congestion: a paced source of RoCE-like UDP
// descriptors (Kind KindRoCE, RC SEND-only, DestQP QP, ECT(0)) of Size
// frame bytes from Src to Dst, at Rate (in wire.OnWireBytes; 0: the
// link's rate), with an on/off pattern:
//
//   - an elephant sends continuously (Off 0), or On then Off repeatedly;
//   - incast bursts send Burst bytes at Rate at the start of every
//     Period — place one on each sender's NIC with the same Period and
//     the same start to make them collide at the receiver.
//
// The source obeys PFC like a NIC: Receive a PFC (or 802.3x PAUSE)
// frame for its priority and it stops for the pause time at the link's
// rate, or resumes on quanta 0. The lab tees the frames its NIC receives
// to it. For stops it (0: until the fault is removed). With Env.Raw the
// frames carry bytes (wire.BuildFrame, valid ICRC) and Len is their
// length: Size with the payload cut to RoCE's 4-byte alignment.
// Destination MACs are left zero (the emulation edge rewrites MACs).
type Traffic struct {
	Incast           bool
	Src, Dst         netip.Addr
	SrcPort, DstPort uint16
	DSCP             uint8
	Prio             int
	QP               uint32
	Size             int
	Rate             clock.Rate
	On, Off          clock.Duration // elephant pattern
	Burst            int64          // incast bytes per period
	Period           clock.Duration // incast period
	For              clock.Duration
}

// TrafficSource is the background traffic generator.
type TrafficSource struct {
	sched    clock.Scheduler
	m        Traffic
	linkRate clock.Rate
	srcMAC   [6]byte
	raw      bool
	out      wire.Sink

	t0, until   clock.Time
	timer       clock.Timer
	timerAt     clock.Time
	tick        func()
	next        clock.Time // earliest next send (pacing)
	period      int64      // incast: current period number
	sentPeriod  int64      // incast: bytes sent in it
	pausedUntil clock.Time
	psn         uint32
	closed      bool
	c           Counters
	// SentBytes counts the frame bytes (Len) sent.
	SentBytes int64
	// PauseFrames counts the pause frames obeyed.
	PauseFrames int64
}

var (
	_ Generator = (*TrafficSource)(nil)
	_ wire.Sink = (*TrafficSource)(nil)
)

// NewTraffic returns a traffic source on sched for a link of linkRate.
func NewTraffic(m Traffic, sched clock.Scheduler, linkRate clock.Rate, srcMAC [6]byte, raw bool) (*TrafficSource, error) {
	if m.Rate == 0 {
		m.Rate = linkRate
	}
	switch {
	case !m.Dst.IsValid():
		return nil, fmt.Errorf("%s: no destination address (dst)", m.kind())
	case m.Src.IsValid() && m.Src.Is4() != m.Dst.Is4():
		return nil, fmt.Errorf("%s: src %s and dst %s are not the same IP version", m.kind(), m.Src, m.Dst)
	case m.Rate <= 0:
		return nil, fmt.Errorf("%s: no rate and no link rate to default to", m.kind())
	case m.Size < wire.MinFrameLen:
		return nil, fmt.Errorf("%s: size %d below the %d-byte minimum frame", m.kind(), m.Size, wire.MinFrameLen)
	case m.Incast && (m.Burst <= 0 || m.Period <= 0):
		return nil, fmt.Errorf("incast: burst and period must be positive")
	case m.Prio < 0 || m.Prio > 7:
		return nil, fmt.Errorf("%s: priority %d out of 0..7", m.kind(), m.Prio)
	}
	if linkRate <= 0 {
		linkRate = m.Rate
	}
	t := &TrafficSource{sched: sched, m: m, linkRate: linkRate, srcMAC: srcMAC, raw: raw}
	t.tick = t.run
	return t, nil
}

// Kind returns KindElephant or KindIncast.
func (t *TrafficSource) Kind() Kind { return t.m.kind() }

// String returns the parameters in Spec syntax.
func (t *TrafficSource) String() string { return t.m.String() }

// Start begins sending into out.
func (t *TrafficSource) Start(out wire.Sink) {
	if t.closed || t.out != nil {
		return
	}
	t.out = out
	t.t0 = t.sched.Now()
	t.until = clock.Never
	if t.m.For > 0 {
		t.until = t.t0.Add(t.m.For)
	}
	t.next = t.t0
	t.run()
}

// Receive obeys PFC and PAUSE frames for the source's priority; it
// ignores everything else.
func (t *TrafficSource) Receive(p *wire.Packet) {
	var q uint16
	switch {
	case p.Kind == wire.KindPFC && p.ClassEnable&(1<<uint(t.m.Prio)) != 0:
		q = p.Quanta[t.m.Prio]
	case p.Kind == wire.KindPause:
		q = p.Quanta[0]
	default:
		return
	}
	t.PauseFrames++
	now := t.sched.Now()
	if q == 0 {
		t.pausedUntil = now
	} else {
		t.pausedUntil = now.Add(wire.PauseTime(t.linkRate, q))
	}
	if t.out != nil && !t.closed {
		t.wake(max(t.pausedUntil, t.next))
	}
}

// Paused reports whether the source is paused now.
func (t *TrafficSource) Paused() bool { return t.sched.Now() < t.pausedUntil }

// wake (re)arms the single timer for at.
func (t *TrafficSource) wake(at clock.Time) {
	if t.timer != nil {
		if t.timerAt == at {
			return
		}
		t.timer.Stop()
	}
	t.timerAt = at
	t.timer = t.sched.AfterFunc(at.Sub(t.sched.Now()), t.tick)
}

func (t *TrafficSource) run() {
	t.timer = nil
	if t.closed {
		return
	}
	now := t.sched.Now()
	if now >= t.until {
		return
	}
	at := max(now, t.next, t.pausedUntil)
	if at == now {
		at = t.window(now)
	}
	if at > now {
		if at < t.until {
			t.wake(at)
		}
		return
	}
	p := t.packet()
	t.c.Generated++
	t.SentBytes += int64(p.Len)
	if t.m.Incast {
		t.sentPeriod += int64(p.Len)
	}
	t.next = now.Add(t.m.Rate.Serialize(wire.OnWireBytes(p.Len)))
	t.out.Receive(p)
	if !t.closed && t.next < t.until {
		t.wake(t.next)
	}
}

// window returns now if the on/off pattern lets the source send now, or
// the start of its next sending window.
func (t *TrafficSource) window(now clock.Time) clock.Time {
	since := now.Sub(t.t0)
	if t.m.Incast {
		k := int64(since / t.m.Period)
		if k != t.period {
			t.period, t.sentPeriod = k, 0
		}
		if t.sentPeriod < t.m.Burst {
			return now
		}
		return t.t0.Add(clock.Duration(k+1) * t.m.Period)
	}
	if t.m.Off == 0 || t.m.On == 0 {
		return now
	}
	cycle := t.m.On + t.m.Off
	if since%cycle < t.m.On {
		return now
	}
	return t.t0.Add((since/cycle + 1) * cycle)
}

func (t *TrafficSource) packet() *wire.Packet {
	p := &wire.Packet{
		Kind:       wire.KindRoCE,
		Len:        t.m.Size,
		SrcMAC:     t.srcMAC,
		SrcIP:      t.m.Src,
		DstIP:      t.m.Dst,
		DSCP:       t.m.DSCP,
		ECN:        wire.ECNECT0,
		TTL:        defaultTrafficIPv4TT,
		Protocol:   17,
		SrcPort:    t.m.SrcPort,
		DstPort:    t.m.DstPort,
		Opcode:     opRCSendOnly,
		BTHControl: wire.BTHControl{PKey: wire.DefaultPKey},
		DestQP:     t.m.QP,
		PSN:        t.psn,
	}
	p.IPVersion, p.EtherType = 4, 0x0800
	if t.m.Dst.Is6() {
		p.IPVersion, p.EtherType = 6, 0x86DD
	}
	t.psn = (t.psn + 1) & 0xFFFFFF
	if t.raw && t.m.Src.IsValid() {
		hdr := 14 + 20 + 8 + 12 + 4
		if p.IPVersion == 6 {
			hdr += 20
		}
		payload := make([]byte, max(0, (t.m.Size-hdr)&^3))
		if raw, err := wire.BuildFrame(p, payload); err == nil {
			if err := p.Decode(raw); err == nil {
				p.Raw = raw
			}
		}
	}
	return p
}

// Collect emits the counters.
func (t *TrafficSource) Collect(emit func(telemetry.Sample)) { t.c.emit(t.Kind(), emit) }

// Close stops the source.
func (t *TrafficSource) Close() {
	t.closed = true
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
}
