package faults

import (
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/wire"
)

// DefaultRateQueue is the rate limiter's queue bound when RateLimit.Queue
// is 0: 1 MiB, about 80 µs at 100G.
const DefaultRateQueue = 1 << 20

// RateLimit models a link that trained at a lower rate than its ports (a
// 400G link up at 100G): a serializer at Rate in the wrapper. Frame i
// leaves at c_i = max(a_i, c_{i−1} + S_i), where a_i is its arrival and
// S_i the time its wire.OnWireBytes take at Rate, so the long-run
// throughput is exactly Rate in wire bytes and an idle link adds no
// delay (the sender already serialized the frame at its own rate). Frames
// waiting for the serializer are bounded by Queue bytes (frame bytes,
// Len); an arrival that would exceed it is dropped and counted.
type RateLimit struct {
	Rate  clock.Rate
	Queue int64 // bytes; 0 means DefaultRateQueue
}

// Shaper is the rate-degradation stage.
type Shaper struct {
	stage
	sched clock.Scheduler
	m     RateLimit
	fifo  releaseQueue
	bytes int64 // Len of the frames in fifo
	last  clock.Time
	peak  int64
}

var _ Stage = (*Shaper)(nil)

// NewRate returns a rate-degradation stage on sched.
func NewRate(m RateLimit, sched clock.Scheduler) *Shaper {
	if m.Queue <= 0 {
		m.Queue = DefaultRateQueue
	}
	s := &Shaper{sched: sched, m: m, last: -1 << 62}
	s.fifo = newReleaseQueue(sched, func(p *wire.Packet) {
		s.bytes -= int64(p.Len)
		s.next.Receive(p)
	})
	return s
}

// Kind returns KindRate.
func (s *Shaper) Kind() Kind { return KindRate }

// String returns the parameters in Spec syntax.
func (s *Shaper) String() string { return s.m.String() }

// QueueBytes returns the bytes waiting for the serializer.
func (s *Shaper) QueueBytes() int64 { return s.bytes }

// Receive queues or forwards p.
func (s *Shaper) Receive(p *wire.Packet) {
	if !s.take(p) {
		s.next.Receive(p)
		return
	}
	now := s.sched.Now()
	at := max(now, s.last.Add(s.m.Rate.Serialize(wire.OnWireBytes(p.Len))))
	if at == now && s.fifo.len() == 0 {
		s.last = at
		s.next.Receive(p)
		return
	}
	if s.bytes+int64(p.Len) > s.m.Queue {
		s.drop()
		return
	}
	s.last = at
	s.c.Delayed++
	s.bytes += int64(p.Len)
	s.peak = max(s.peak, s.bytes)
	s.fifo.push(timed{p: p, at: at}, now)
}

// Collect emits the counters and the queue gauges.
func (s *Shaper) Collect(emit func(telemetry.Sample)) {
	s.c.emit(KindRate, emit)
	l := []telemetry.Label{{Name: "kind", Value: string(KindRate)}}
	emit(telemetry.Sample{Name: "fault_queue_bytes", Kind: telemetry.Gauge, Labels: l, Value: float64(s.bytes)})
	emit(telemetry.Sample{Name: "fault_queue_peak_bytes", Kind: telemetry.Gauge, Labels: l, Value: float64(s.peak)})
}

// Close releases the queued frames now, in order, and passes everything
// through from then on (the link retrained at full rate).
func (s *Shaper) Close() {
	if s.closed {
		return
	}
	s.closed = true
	q := s.fifo.drain()
	s.bytes = 0
	for _, it := range q {
		s.next.Receive(it.p)
	}
}
