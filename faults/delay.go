package faults

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/wire"
)

// Dist is the distribution of delay jitter.
type Dist uint8

// Jitter distributions. Each is scaled so that Jitter is the spread named
// below and the mean added delay is Delay (before clamping at 0).
const (
	// DistUniform: Delay + U(−Jitter, +Jitter); standard deviation Jitter/√3.
	DistUniform Dist = iota
	// DistNormal: Delay + Jitter·N(0, 1); standard deviation Jitter.
	DistNormal
	// DistPareto: Delay + Jitter·(Y − E[Y])/σ[Y] with Y Pareto of shape
	// Alpha (> 2) — like netem's table-driven distributions, a
	// heavy-tailed jitter of mean 0 and standard deviation Jitter.
	DistPareto
)

var distNames = [...]string{"uniform", "normal", "pareto"}

func (d Dist) String() string {
	if int(d) < len(distNames) {
		return distNames[d]
	}
	return "?"
}

// DefaultParetoAlpha is the Pareto shape when Delay.Alpha is 0.
const DefaultParetoAlpha = 3

// DefaultHold is how long a reordered packet is held back when
// Delay.Hold is 0.
const DefaultHold = 10 * clock.Microsecond

// Delay adds a constant delay plus jitter and optionally reorders.
//
// Without reordering the stage is FIFO: a packet never leaves before one
// that entered earlier (its departure is max(arrival + sampled delay,
// previous departure)), so jitter does not reorder — unlike plain netem,
// which reorders when jitter exceeds the packet spacing. With Reorder > 0
// a fraction Reorder of packets is held back by Hold on top of their
// sampled delay, outside the FIFO, so later packets overtake them.
// Packets that do not match pass through undelayed.
type Delay struct {
	Delay, Jitter clock.Duration
	Dist          Dist
	Alpha         float64 // Pareto shape; 0 means DefaultParetoAlpha
	Reorder       float64 // fraction held back
	Hold          clock.Duration
}

// Delayer is the delay/jitter/reorder stage.
type Delayer struct {
	stage
	sched   clock.Scheduler
	rng     *rand.Rand
	m       Delay
	pm, psd float64 // Pareto mean and standard deviation (xm = 1)

	fifo releaseQueue // departure order; at is nondecreasing
	last clock.Time
	held map[uint64]*timed
	seq  uint64
}

var _ Stage = (*Delayer)(nil)

// NewDelay returns a delay stage on sched drawing from rng.
func NewDelay(m Delay, sched clock.Scheduler, rng *rand.Rand) *Delayer {
	if m.Alpha == 0 {
		m.Alpha = DefaultParetoAlpha
	}
	if m.Reorder > 0 && m.Hold == 0 {
		m.Hold = DefaultHold
	}
	d := &Delayer{sched: sched, rng: rng, m: m, held: map[uint64]*timed{}}
	a := m.Alpha
	d.pm = a / (a - 1)
	d.psd = math.Sqrt(a / ((a - 1) * (a - 1) * (a - 2)))
	d.fifo = newReleaseQueue(sched, func(p *wire.Packet) { d.next.Receive(p) })
	return d
}

// Kind returns KindDelay, or KindReorder for a pure reorder.
func (d *Delayer) Kind() Kind { return d.m.kind() }

// String returns the parameters in Spec syntax.
func (d *Delayer) String() string { return d.m.String() }

// Sample draws one added delay (before FIFO ordering), ≥ 0.
func (d *Delayer) Sample() clock.Duration {
	x := float64(d.m.Delay)
	if d.m.Jitter > 0 {
		j := float64(d.m.Jitter)
		switch d.m.Dist {
		case DistUniform:
			x += j * (2*d.rng.Float64() - 1)
		case DistNormal:
			x += j * d.rng.NormFloat64()
		case DistPareto:
			u := 1 - d.rng.Float64() // (0, 1]
			y := math.Pow(u, -1/d.m.Alpha)
			x += j * (y - d.pm) / d.psd
		}
	}
	if x < 0 {
		return 0
	}
	return clock.Duration(math.Round(x))
}

// Receive delays p.
func (d *Delayer) Receive(p *wire.Packet) {
	if !d.take(p) {
		d.next.Receive(p)
		return
	}
	now := d.sched.Now()
	delay := d.Sample()
	d.seq++
	if d.m.Reorder > 0 && d.rng.Float64() < d.m.Reorder {
		d.c.Reordered++
		d.c.Delayed++
		it := &timed{p: p, at: now.Add(delay + d.m.Hold), seq: d.seq}
		d.held[it.seq] = it
		it.t = d.sched.AfterFunc(it.at.Sub(now), func() {
			delete(d.held, it.seq)
			d.next.Receive(it.p)
		})
		return
	}
	at := max(now.Add(delay), d.last)
	d.last = at
	if at == now && d.fifo.len() == 0 {
		d.next.Receive(p)
		return
	}
	d.c.Delayed++
	d.fifo.push(timed{p: p, at: at, seq: d.seq}, now)
}

// Held returns how many packets the stage holds.
func (d *Delayer) Held() int { return d.fifo.len() + len(d.held) }

// Collect emits the counters and the held-packet gauge.
func (d *Delayer) Collect(emit func(telemetry.Sample)) {
	d.c.emit(d.Kind(), emit)
	emit(telemetry.Sample{Name: "fault_held_packets", Kind: telemetry.Gauge,
		Labels: []telemetry.Label{{Name: "kind", Value: string(d.Kind())}}, Value: float64(d.Held())})
}

// Close releases every held packet now, in departure order, and passes
// everything through from then on.
func (d *Delayer) Close() {
	if d.closed {
		return
	}
	d.closed = true
	all := d.fifo.drain()
	for _, it := range d.held {
		it.t.Stop()
		all = append(all, *it)
	}
	d.held = map[uint64]*timed{}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].at != all[j].at {
			return all[i].at < all[j].at
		}
		return all[i].seq < all[j].seq
	})
	for _, it := range all {
		d.next.Receive(it.p)
	}
}
