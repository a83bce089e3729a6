package faults

import (
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/wire"
)

// Flap takes a link direction down periodically: down during
// [t0 + Offset + k·Period, t0 + Offset + k·Period + Down) for k = 0, 1, …,
// where t0 is when the fault started; up otherwise. The zero Flap (Period
// 0) is a link that is down until the fault is removed ("down"). While
// down, every matching packet reaching the wrapper is dropped and counted;
// frames already past it (on the wire, in propagation) still arrive.
// Bringing a link up is removing its down fault (or LinkFault.SetDown).
type Flap struct {
	Period, Down, Offset clock.Duration
}

// LinkFault is the link down/flap stage.
type LinkFault struct {
	stage
	sched  clock.Scheduler
	m      Flap
	t0     clock.Time
	forced int8 // +1 forced down, −1 forced up, 0 schedule
}

var _ Stage = (*LinkFault)(nil)

// NewLinkFault returns a down (m.Period 0) or flap stage whose schedule
// starts now.
func NewLinkFault(m Flap, sched clock.Scheduler) *LinkFault {
	return &LinkFault{sched: sched, m: m, t0: sched.Now()}
}

// Kind returns KindDown or KindFlap.
func (l *LinkFault) Kind() Kind {
	if l.m.Period == 0 {
		return KindDown
	}
	return KindFlap
}

// String returns the parameters in Spec syntax.
func (l *LinkFault) String() string { return l.m.String() }

// SetDown forces the link down (true) or up (false), overriding the
// schedule until the fault is removed.
func (l *LinkFault) SetDown(down bool) {
	l.forced = -1
	if down {
		l.forced = 1
	}
}

// IsDown reports whether the link is down at t.
func (l *LinkFault) IsDown(t clock.Time) bool {
	switch {
	case l.closed:
		return false
	case l.forced != 0:
		return l.forced > 0
	case l.m.Period == 0:
		return true
	}
	since := t.Sub(l.t0) - l.m.Offset
	return since >= 0 && since%l.m.Period < l.m.Down
}

// Receive drops p while the link is down.
func (l *LinkFault) Receive(p *wire.Packet) {
	if l.take(p) && l.IsDown(l.sched.Now()) {
		l.drop()
		return
	}
	l.next.Receive(p)
}

// Collect emits the counters and a link_down gauge (1 while down).
func (l *LinkFault) Collect(emit func(telemetry.Sample)) {
	l.c.emit(l.Kind(), emit)
	v := 0.0
	if l.IsDown(l.sched.Now()) {
		v = 1
	}
	emit(telemetry.Sample{Name: "fault_link_down", Kind: telemetry.Gauge,
		Labels: []telemetry.Label{{Name: "kind", Value: string(l.Kind())}}, Value: v})
}
