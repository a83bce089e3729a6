package faults

import (
	"fmt"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/wire"
)

// Storm defaults.
const (
	DefaultStormPrio     = 3
	DefaultStormQuanta   = 0xFFFF
	DefaultStormInterval = 10 * clock.Microsecond
)

// PFCStorm is a NIC gone bad: it sends 802.1Qbb XOFF frames for priority
// Prio with pause time Quanta (× 512 bit times), one at once and then
// every Interval, for For (0: until the fault is removed). Frames are
// descriptors (Kind KindPFC, Len 60, DstMAC 01:80:C2:00:00:01, SrcMAC the
// port's); with Env.Raw they also carry their bytes (wire.BuildFrame).
type PFCStorm struct {
	Prio     int
	Quanta   uint16
	Interval clock.Duration
	For      clock.Duration
}

// Storm is the PFC storm generator.
type Storm struct {
	sched  clock.Scheduler
	m      PFCStorm
	srcMAC [6]byte
	raw    bool
	out    wire.Sink
	until  clock.Time
	timer  clock.Timer
	closed bool
	c      Counters
	tick   func()
}

var _ Generator = (*Storm)(nil)

// NewStorm returns a storm generator on sched; frames come from srcMAC
// and carry bytes when raw is set. It sends nothing until Start.
func NewStorm(m PFCStorm, sched clock.Scheduler, srcMAC [6]byte, raw bool) (*Storm, error) {
	if m.Prio < 0 || m.Prio > 7 {
		return nil, fmt.Errorf("storm: priority %d out of 0..7", m.Prio)
	}
	if m.Interval <= 0 {
		return nil, fmt.Errorf("storm: interval must be positive")
	}
	s := &Storm{sched: sched, m: m, srcMAC: srcMAC, raw: raw}
	s.tick = s.send
	return s, nil
}

// Kind returns KindStorm.
func (s *Storm) Kind() Kind { return KindStorm }

// String returns the parameters in Spec syntax.
func (s *Storm) String() string { return s.m.String() }

// Start sends the first frame into out now and arms the next.
func (s *Storm) Start(out wire.Sink) {
	if s.closed || s.out != nil {
		return
	}
	s.out = out
	s.until = clock.Never
	if s.m.For > 0 {
		s.until = s.sched.Now().Add(s.m.For)
	}
	s.send()
}

// Frame returns one storm frame.
func (s *Storm) Frame() *wire.Packet {
	p := &wire.Packet{
		Kind:        wire.KindPFC,
		Len:         wire.MinFrameLen,
		DstMAC:      wire.PFCDstMAC,
		SrcMAC:      s.srcMAC,
		EtherType:   wire.EtherTypeMACControl,
		ClassEnable: 1 << uint(s.m.Prio),
	}
	p.Quanta[s.m.Prio] = s.m.Quanta
	if s.raw {
		raw, err := wire.BuildFrame(p, nil)
		if err == nil { // a PFC spec cannot fail; keep the descriptor if it did
			p.Raw, p.Len = raw, len(raw)
		}
	}
	return p
}

func (s *Storm) send() {
	s.timer = nil
	if s.closed || s.sched.Now() >= s.until {
		return
	}
	s.c.Generated++
	s.out.Receive(s.Frame())
	if s.sched.Now().Add(s.m.Interval) < s.until && !s.closed {
		s.timer = s.sched.AfterFunc(s.m.Interval, s.tick)
	}
}

// Collect emits the counters.
func (s *Storm) Collect(emit func(telemetry.Sample)) { s.c.emit(KindStorm, emit) }

// Close stops the storm.
func (s *Storm) Close() {
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}
