package emu

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
)

// loopStats are the Loop's own counters, touched on the loop goroutine only.
type loopStats struct {
	started time.Time
	batches int64
	busy    time.Duration // wall time spent in turns
	lagged  int64         // batches that ran after their due time
	ring    []time.Duration
	next    int
	full    bool
	maxLag  time.Duration
	// Ages of delivered stamped frames: how far before the turn's now
	// (fabric time) each was delivered.
	ageSum   clock.Duration
	ageCount int64
	ageMax   clock.Duration
	// Wake-ups by cause (wakeRx: a port had frames; wakeTimer: an event
	// fell due; wakeOther: a Post, a Wake or a spurious return), and the
	// wall time of each phase of the turns, and of the waits between them.
	wakeRx, wakeTimer, wakeOther int64
	// maxTurn is the longest turn (wall clock), maxOversleep the most
	// later than asked a timed Wait returned.
	maxTurn, maxOversleep time.Duration
	phase                 [numPhases]time.Duration
	// cpuOK: Run holds the loop's OS thread, so that thread's CPU time
	// (read from the kernel) is the loop's.
	cpuOK bool
}

// Phases of a turn, for emu_loop_seconds_total.
const (
	phaseRead  = iota // read every ready port, decode
	phaseModel        // deliver, run the due events and posted functions
	phaseWrite        // write the batches
	phaseWait         // in Waiter.Wait between turns
	numPhases
)

var phaseNames = [numPhases]string{"read", "model", "write", "wait"}

// age records how far in the past (fabric time) a frame was delivered.
func (s *loopStats) age(d clock.Duration) {
	s.ageSum += d
	s.ageCount++
	s.ageMax = max(s.ageMax, d)
}

func (s *loopStats) init(window int) { s.ring = make([]time.Duration, window) }

// lag records how late (wall clock) a batch ran after its due time.
func (s *loopStats) lag(d time.Duration) {
	d = max(d, 0)
	s.lagged++
	s.maxLag = max(s.maxLag, d)
	s.ring[s.next] = d
	s.next++
	if s.next == len(s.ring) {
		s.next, s.full = 0, true
	}
}

// Lag summarises batch lateness over the last LagWindow batches that ran
// because an event was due: how long after the event's due time its batch
// started, in wall-clock time (Wall*) and fabric time (Fabric* = Wall/k).
type Lag struct {
	Batches                int64
	WallP50, WallP99, Wall time.Duration
	FabricP50, FabricP99   clock.Duration
	FabricMax              clock.Duration
	// WallP90 and WallP999 complete the distribution (wall clock).
	WallP90, WallP999 time.Duration
	// Busy is the share of wall time since Run started spent running
	// batches, 0..1: the loop's load.
	Busy float64
}

// Lag returns the current lag summary. Call it on the loop goroutine.
func (l *Loop) Lag() Lag {
	s := &l.stats
	n := s.next
	if s.full {
		n = len(s.ring)
	}
	w := slices.Clone(s.ring[:n])
	slices.Sort(w)
	q := func(f float64) time.Duration {
		if len(w) == 0 {
			return 0
		}
		return w[int(f*float64(len(w)-1)+0.5)]
	}
	out := Lag{Batches: s.lagged, WallP50: q(0.5), WallP99: q(0.99), Wall: s.maxLag, WallP90: q(0.9), WallP999: q(0.999)}
	out.FabricP50, out.FabricP99, out.FabricMax = l.toFabric(out.WallP50), l.toFabric(out.WallP99), l.toFabric(out.Wall)
	if el := time.Since(s.started); !s.started.IsZero() && el > 0 {
		out.Busy = min(1, s.busy.Seconds()/el.Seconds())
	}
	return out
}

// toFabric converts a wall-clock span to fabric time.
func (l *Loop) toFabric(d time.Duration) clock.Duration {
	return clock.Duration(d.Nanoseconds() * int64(clock.Nanosecond) / l.scale)
}

// toWall converts a fabric-time span to the wall clock.
func (l *Loop) toWall(d clock.Duration) time.Duration {
	return time.Duration(int64(d) / int64(clock.Nanosecond) * l.scale)
}

// Collect emits the Loop's telemetry (node=Name): per-port frame counters
// (port=index, as the switch model labels its ports, and ifname=Name),
// batch and event counts, lag quantiles (emu_batch_lag_seconds with
// clock=wall|fabric and quantile=0.5|0.99|1), busy share, fabric time and
// scale. Call it on the loop goroutine (Do, or Gather).
func (l *Loop) Collect(emit func(telemetry.Sample)) {
	l.collectPorts(emit, l.name, 0, len(l.ports))
	l.collectLoop(emit, l.name)
}

// Share is the part of a Loop one node owns when several nodes' models
// run on one loop (a node group): ports [first, first+n) of the loop,
// numbered from 0 as the node's model numbers them. As a telemetry
// source it reports those ports under the node's name, and the loop's
// own counters (lag, wake-ups, CPU, events) when it is the loop's
// leader, so that a sum over nodes counts them once.
type Share struct {
	l        *Loop
	node     string
	first, n int
	leader   bool
}

// Share returns node's share of the loop: n ports from first.
func (l *Loop) Share(node string, first, n int, leader bool) *Share {
	return &Share{l: l, node: node, first: first, n: n, leader: leader}
}

// Collect emits the share's telemetry; call it on the loop goroutine.
func (s *Share) Collect(emit func(telemetry.Sample)) {
	s.l.collectPorts(emit, s.node, s.first, s.n)
	if s.leader {
		s.l.collectLoop(emit, s.node)
	}
}

// collectPorts emits the counters of ports [first, first+n) labeled
// node=name and port=their index from first.
func (l *Loop) collectPorts(emit func(telemetry.Sample), name string, first, n int) {
	node := []telemetry.Label{{Name: "node", Value: name}}
	c := func(name string, v int64, lb []telemetry.Label) {
		emit(telemetry.Sample{Name: name, Kind: telemetry.Counter, Labels: lb, Value: float64(v)})
	}
	g := func(name string, v float64, lb []telemetry.Label) {
		emit(telemetry.Sample{Name: name, Kind: telemetry.Gauge, Labels: lb, Value: v})
	}
	for _, p := range l.ports[first : first+n] {
		lb := telemetry.With(node, telemetry.Label{Name: "port", Value: strconv.Itoa(p.idx - first)}, telemetry.Label{Name: "ifname", Value: p.name})
		c("emu_rx_frames_total", p.rxFrames, lb)
		c("emu_rx_bytes_total", p.rxBytes, lb)
		c("emu_rx_malformed_total", p.rxMalformed, lb)
		c("emu_rx_errors_total", p.rxErrors, lb)
		c("emu_rx_unstamped_frames_total", p.rxUnstamped, lb)
		c("emu_rx_stamp_clamped_total", p.rxStampClamped, lb)
		c("emu_rx_late_frames_total", p.rxLate, lb)
		emit(telemetry.Sample{Name: "emu_rx_late_seconds_total", Kind: telemetry.Counter, Labels: lb, Value: p.rxLateBy.Seconds()})
		c("emu_rx_trailer_frames_total", p.rxTrailers, lb)
		c("emu_rx_inloop_frames_total", p.rxInLoop, lb)
		c("emu_rx_behind_lead_frames_total", p.rxBehindLead, lb)
		emit(telemetry.Sample{Name: "emu_rx_behind_lead_seconds_total", Kind: telemetry.Counter, Labels: lb, Value: p.rxBehindLeadBy.Seconds()})
		emit(telemetry.Sample{Name: "emu_rx_sender_late_seconds_total", Kind: telemetry.Counter, Labels: lb, Value: p.rxSenderLate.Seconds()})
		c("emu_tx_frames_total", p.txFrames, lb)
		c("emu_tx_bytes_total", p.txBytes, lb)
		c("emu_tx_errors_total", p.txErrors, lb)
		c("emu_tx_encode_errors_total", p.txEncode, lb)
		g("emu_delay_line_frames", float64(p.onLink), lb)
		c("emu_rx_batches_total", p.rxBatches, lb)
		c("emu_tx_batches_total", p.txBatches, lb)
		if sc, ok := p.io.(SyscallCounter); ok {
			rx, tx := sc.Syscalls()
			c("emu_rx_syscalls_total", int64(rx), lb)
			c("emu_tx_syscalls_total", int64(tx), lb)
		}
	}
}

// collectLoop emits the loop's own counters labeled node=name.
func (l *Loop) collectLoop(emit func(telemetry.Sample), name string) {
	node := []telemetry.Label{{Name: "node", Value: name}}
	c := func(name string, v int64, lb []telemetry.Label) {
		emit(telemetry.Sample{Name: name, Kind: telemetry.Counter, Labels: lb, Value: float64(v)})
	}
	g := func(name string, v float64, lb []telemetry.Label) {
		emit(telemetry.Sample{Name: name, Kind: telemetry.Gauge, Labels: lb, Value: v})
	}
	behind := 0.0
	if !l.behind.since.IsZero() {
		behind = 1
	}
	g("emu_behind", behind, node)
	for _, w := range []struct {
		cause string
		n     int64
	}{{"rx", l.stats.wakeRx}, {"timer", l.stats.wakeTimer}, {"other", l.stats.wakeOther}} {
		c("emu_wakeups_total", w.n, telemetry.With(node, telemetry.Label{Name: "cause", Value: w.cause}))
	}
	for i, d := range l.stats.phase {
		lb := telemetry.With(node, telemetry.Label{Name: "phase", Value: phaseNames[i]})
		emit(telemetry.Sample{Name: "emu_loop_seconds_total", Kind: telemetry.Counter, Labels: lb, Value: d.Seconds()})
	}
	g("emu_turn_max_seconds", l.stats.maxTurn.Seconds(), node)
	g("emu_oversleep_max_seconds", l.stats.maxOversleep.Seconds(), node)
	if cpu, ok := l.threadCPU(); ok {
		emit(telemetry.Sample{Name: "emu_loop_cpu_seconds_total", Kind: telemetry.Counter, Labels: node, Value: cpu.Seconds()})
	}
	c("emu_batches_total", l.stats.batches, node)
	c("emu_events_total", int64(l.eng.Executed()), node)
	lag := l.Lag()
	c("emu_lagged_batches_total", lag.Batches, node)
	for _, x := range []struct {
		q      string
		wall   time.Duration
		fabric clock.Duration
	}{
		{"0.5", lag.WallP50, lag.FabricP50}, {"0.9", lag.WallP90, l.toFabric(lag.WallP90)}, {"0.99", lag.WallP99, lag.FabricP99},
		{"0.999", lag.WallP999, l.toFabric(lag.WallP999)}, {"1", lag.Wall, lag.FabricMax},
	} {
		qs := telemetry.Label{Name: "quantile", Value: x.q}
		g("emu_batch_lag_seconds", x.wall.Seconds(), telemetry.With(node, telemetry.Label{Name: "clock", Value: "wall"}, qs))
		g("emu_batch_lag_seconds", x.fabric.Seconds(), telemetry.With(node, telemetry.Label{Name: "clock", Value: "fabric"}, qs))
	}
	g("emu_busy_ratio", lag.Busy, node)
	c("emu_rx_replayed_frames_total", l.stats.ageCount, node)
	g("emu_rx_replay_age_seconds", l.stats.ageMax.Seconds(), telemetry.With(node, telemetry.Label{Name: "stat", Value: "max"}))
	mean := 0.0
	if l.stats.ageCount > 0 {
		mean = l.stats.ageSum.Seconds() / float64(l.stats.ageCount)
	}
	g("emu_rx_replay_age_seconds", mean, telemetry.With(node, telemetry.Label{Name: "stat", Value: "mean"}))
	emit(telemetry.Sample{Name: "emu_fabric_seconds_total", Kind: telemetry.Counter, Labels: node, Value: l.eng.Now().Seconds()})
	g("emu_scale_factor", float64(l.scale), node)
	// emu_dilation_factor is emu_scale_factor's old name, still emitted
	// for one release (deprecated; removed in the next).
	g("emu_dilation_factor", float64(l.scale), node)
}

// Gather is telemetry.Gather over the Loop and srcs, collecting on the
// loop goroutine and sorting on the caller's: the safe way for another
// goroutine to read the models' counters, costing the loop only the
// collection. It also returns the fabric time they were read at.
func (l *Loop) Gather(ctx context.Context, srcs ...telemetry.Source) (clock.Time, []telemetry.Sample, error) {
	return l.GatherOnly(ctx, nil, srcs...)
}

// GatherOnly is Gather keeping only the samples whose name keep accepts
// (nil: all).
func (l *Loop) GatherOnly(ctx context.Context, keep func(name string) bool, srcs ...telemetry.Source) (clock.Time, []telemetry.Sample, error) {
	return l.GatherFrom(ctx, keep, append([]telemetry.Source{l}, srcs...)...)
}

// GatherFrom is GatherOnly over srcs alone, without the Loop's own
// telemetry: for a node that owns a Share of the loop.
func (l *Loop) GatherFrom(ctx context.Context, keep func(name string) bool, srcs ...telemetry.Source) (clock.Time, []telemetry.Sample, error) {
	var now clock.Time
	var out []telemetry.Sample
	collect := func() {
		now, out = l.Now(), telemetry.CollectIf(keep, srcs...)
	}
	if err := l.Do(ctx, collect); err != nil {
		return 0, nil, err
	}
	telemetry.Sort(out)
	return now, out, nil
}
