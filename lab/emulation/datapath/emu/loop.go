package emu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/wire"
)

// Options configure a Loop.
type Options struct {
	// Name labels the Loop's telemetry (node=Name).
	Name string
	// Scale is the scale factor k >= 1: fabric time = wall / k.
	Scale int
	// Seed seeds the engine's random streams (Rand).
	Seed  uint64
	Ports []Port
	// Waiter is required.
	Waiter Waiter
	// BufSize is the receive buffer of each descriptor, the largest frame
	// read whole (0 = 9216 + 64).
	BufSize int
	// ReadBatch is how many frames one read of one port takes (0 = 64).
	ReadBatch int
	// Recycle puts transmitted descriptors back on the free list (see the
	// package doc); a switch node sets it.
	Recycle bool
	// LagWindow is how many recent batches the lag quantiles cover
	// (0 = 4096).
	LagWindow int
	// Replay chooses which received frames are delivered at the fabric
	// time of their receive stamp rather than at the turn's now (default
	// ReplayNone); see the package doc, "Late turns".
	Replay Replay
	// Origin, if not zero, is the wall-clock instant of fabric time 0
	// (CLOCK_REALTIME): a lab-wide origin that every node of a lab
	// spanning machines shares. Zero: the instant Run starts. Before an
	// origin in the future, fabric time stays 0.
	Origin time.Time
	// Lead is how far ahead of the wall clock (fabric time) a turn may
	// run events, so that one wake-up runs every event due within it
	// (see the package doc, "Running ahead"): 0 is the default, a
	// quarter of the shortest link delay; negative turns it off. It is
	// capped at a quarter of the shortest delay, and 0 without delays.
	Lead clock.Duration
	// InLoopLinks carries the frames of every link whose two ends are
	// ports of this Loop (one's PeerMAC is the other's MAC) in memory,
	// from one model to the other, instead of through their sockets: see
	// the package doc, "Links inside a loop".
	InLoopLinks bool
}

// Replay is which received frames a Loop delivers at their receive
// stamps.
type Replay uint8

// Replay policies.
const (
	ReplayNone   Replay = iota // every frame at the turn's now
	ReplayPauses               // pauses (PFC/PAUSE XOFF) at their stamps
	ReplayAll                  // every frame at its stamp
)

// Loop is the wall-clock driver of one node's models. It implements
// clock.Scheduler; see the package doc for its turn, its threads and the
// ownership of packets.
type Loop struct {
	name    string
	scale   int64
	eng     *sim.Engine
	origin  time.Time // Options.Origin
	waiter  Waiter
	ports   []*port
	bufSize int
	batch   int
	recycle bool
	replay  Replay
	free    []*wire.Packet
	scratch [][]byte // scratchBufs
	start   time.Time
	ready   []int
	// quiet is the waiter when it can sleep without watching the ports
	// and every port's link has a delay; quietFor is then half the
	// shortest delay in wall time, and readAt when the last turn that
	// read frames read them.
	quiet    QuietWaiter
	quietFor time.Duration
	readAt   time.Time
	// lead is Options.Lead in fabric time and leadWall in wall time;
	// aheadAt is the wall time a turn's horizon (its now plus lead)
	// maps to: the next turn for events alone waits at least until
	// then.
	lead     clock.Duration
	leadWall time.Duration
	aheadAt  time.Time
	// arrivals are the frames read this turn, before delivery.
	arrivals []arrival

	mu      sync.Mutex
	posted  []func()
	running bool
	exited  bool
	done    chan struct{}

	stats  loopStats
	behind behindTracker
}

var _ clock.Scheduler = (*Loop)(nil)

// ErrStopped is returned by Do once the Loop has stopped.
var ErrStopped = errors.New("emu: loop stopped")

// New builds a Loop. Connect every port before Run.
func New(opts Options) (*Loop, error) {
	if opts.Scale < 1 {
		return nil, fmt.Errorf("emu: scale %d: must be at least 1", opts.Scale)
	}
	if opts.Waiter == nil {
		return nil, errors.New("emu: no waiter")
	}
	l := &Loop{
		name:    opts.Name,
		scale:   int64(opts.Scale),
		eng:     sim.New(opts.Seed),
		waiter:  opts.Waiter,
		bufSize: opts.BufSize,
		batch:   opts.ReadBatch,
		recycle: opts.Recycle,
		replay:  opts.Replay,
		origin:  opts.Origin,
		done:    make(chan struct{}),
	}
	if l.bufSize <= 0 {
		l.bufSize = 9216 + 64
	}
	if l.batch <= 0 {
		l.batch = 64
	}
	win := opts.LagWindow
	if win <= 0 {
		win = 4096
	}
	l.stats.init(win)
	for i, p := range opts.Ports {
		if p.IO == nil {
			return nil, fmt.Errorf("emu: port %d (%s): no I/O", i, p.Name)
		}
		l.ports = append(l.ports, newPort(l, i, p))
	}
	if opts.InLoopLinks {
		l.joinInLoopLinks()
	}
	shortest := clock.Duration(0)
	if len(l.ports) > 0 {
		shortest = clock.Never.Sub(0)
		for _, p := range l.ports {
			shortest = min(shortest, p.delay)
		}
	}
	if q, ok := opts.Waiter.(QuietWaiter); ok && shortest > 0 {
		l.quiet = q
		l.quietFor = l.toWall(shortest) / 2
	}
	// A turn that ran ahead to now + lead and a quiet sleep of half the
	// delay leave a quarter of the delay for a frame read at the end of
	// the sleep to be due after the horizon.
	if maxLead := shortest / 4; opts.Lead >= 0 && maxLead > 0 {
		l.lead = maxLead
		if opts.Lead > 0 {
			l.lead = min(opts.Lead, maxLead)
		}
		l.leadWall = l.toWall(l.lead)
	}
	return l, nil
}

// Scale returns the scale factor k.
func (l *Loop) Scale() int { return int(l.scale) }

// NumPorts returns the number of ports.
func (l *Loop) NumPorts() int { return len(l.ports) }

// Now returns the fabric time of the event or batch being run. It advances
// in batches, like the simulator's, not continuously.
func (l *Loop) Now() clock.Time { return l.eng.Now() }

// AfterFunc runs f on the loop goroutine d of fabric time after Now.
func (l *Loop) AfterFunc(d clock.Duration, f func()) clock.Timer {
	return l.eng.AfterFunc(d, f)
}

// At runs f on the loop goroutine at fabric time t (clamped to Now).
func (l *Loop) At(t clock.Time, f func()) clock.Timer {
	return l.eng.At(t, f)
}

// Rand returns the engine's seeded random stream called name, as the
// simulator's Engine.Rand does.
func (l *Loop) Rand(name string) *rand.Rand { return l.eng.Rand(name) }

// NewRand is sim.Engine.NewRand: a stream that is not kept.
func (l *Loop) NewRand(name string) *rand.Rand { return l.eng.NewRand(name) }

// Start returns the wall-clock time of fabric time 0 (zero before Run).
func (l *Loop) Start() time.Time { return l.start }

// Connect sets the model sink that frames received on port i are
// delivered to, and returns the sink the model transmits into on port i
// (for a switch: sw.Attach(i, loop.Connect(i, sw.Port(i)))).
func (l *Loop) Connect(i int, model wire.Sink) wire.Sink {
	p := l.ports[i]
	p.model = model
	return (*egress)(p)
}

// SetTap sets (or, with nil, clears) port i's tap, which sees every frame
// the port delivers to the model and every frame it writes. Call it on the
// loop goroutine.
func (l *Loop) SetTap(i int, t Tap) { l.ports[i].tap = t }

// SetRelease sets the function a Keep port hands each descriptor the
// model sent to once its frame is written (or could not be): the model
// may then reuse the descriptor and its bytes (an endpoint's NIC builds
// its next frames in them: endpoint.NIC.Release). Call it on the loop
// goroutine or before Run.
func (l *Loop) SetRelease(i int, release func(*wire.Packet)) { l.ports[i].release = release }

// PortMAC returns port i's MAC (safe from any goroutine: it never changes).
func (l *Loop) PortMAC(i int) [6]byte { return l.ports[i].mac }

// PortName returns port i's name.
func (l *Loop) PortName(i int) string { return l.ports[i].name }

// fabricAt maps a wall-clock time to fabric time (negative before the
// origin: nothing is due then, and the engine stays at 0).
func (l *Loop) fabricAt(w time.Time) clock.Time {
	return clock.Time(w.Sub(l.start).Nanoseconds() * int64(clock.Nanosecond) / l.scale)
}

// wallAt maps a fabric time to the wall clock; times too far ahead to
// map are clamped about a century after the start.
func (l *Loop) wallAt(t clock.Time) time.Time {
	if int64(t) > math.MaxInt64/l.scale {
		t = clock.Time(math.MaxInt64 / l.scale)
	}
	return l.start.Add(time.Duration(int64(t) * l.scale / int64(clock.Nanosecond)))
}

// addSat returns t+d, with d <= 0 meaning t and saturating at clock.Never.
func addSat(t clock.Time, d clock.Duration) clock.Time {
	if d <= 0 {
		return t
	}
	if d > clock.Never.Sub(t) {
		return clock.Never
	}
	return t.Add(d)
}

// Post queues f to run on the loop goroutine at the next turn, at the
// fabric time of that turn, and reports whether it was queued (false once
// Run has returned).
func (l *Loop) Post(f func()) bool {
	l.mu.Lock()
	if l.exited {
		l.mu.Unlock()
		return false
	}
	l.posted = append(l.posted, f)
	running := l.running
	l.mu.Unlock()
	if running {
		l.waiter.Wake()
	}
	return true
}

// Do runs f on the loop goroutine and waits for it. It returns ctx's
// error if ctx ends first (f may still run later), and ErrStopped if the
// Loop stops before running f.
func (l *Loop) Do(ctx context.Context, f func()) error {
	ran := make(chan struct{})
	if !l.Post(func() { f(); close(ran) }) {
		return ErrStopped
	}
	select {
	case <-ran:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-l.done:
		select {
		case <-ran:
			return nil
		default:
			return ErrStopped
		}
	}
}

// Run drives the models until ctx ends or the Waiter fails, on the calling
// goroutine; fabric time 0 is when Run starts. It starts no goroutine that
// outlives it. Run does not close the ports or the Waiter: whoever opened
// them closes them after Run returns.
func (l *Loop) Run(ctx context.Context) error {
	l.mu.Lock()
	if l.running || l.exited {
		l.mu.Unlock()
		return errors.New("emu: Run called twice")
	}
	l.running = true
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.running, l.exited = false, true
		l.posted = nil
		l.mu.Unlock()
		close(l.done)
	}()
	stop := context.AfterFunc(ctx, func() { l.waiter.Wake() })
	defer stop()

	// The loop keeps one OS thread: a wake-up resumes the thread that
	// slept, without a hand-over between threads, and the thread's CPU
	// time is the loop's (emu_loop_cpu_seconds_total).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	l.stats.cpuOK = true
	defer func() { l.stats.cpuOK = false }()

	now := time.Now()
	l.start = now
	if !l.origin.IsZero() {
		// The origin's wall-clock reading, kept on this process's
		// monotonic clock from here on.
		l.start = now.Add(l.origin.Sub(now))
	}
	l.stats.started = now
	l.waiter.Wake() // run what was posted before Run
	for _, p := range l.ports {
		if p.model == nil {
			return fmt.Errorf("emu: port %d (%s) not connected", p.idx, p.name)
		}
	}
	for ctx.Err() == nil {
		timeout := time.Duration(-1)
		next, pending := l.eng.Next()
		if pending {
			// Wake lead early, but not before the last turn's horizon:
			// every event up to it has run, so events due after it
			// gather for one turn (never late: next is past it).
			wake := l.wallAt(next).Add(-l.leadWall)
			if wake.Before(l.aheadAt) {
				wake = l.aheadAt
			}
			timeout = min(max(0, time.Until(wake)), maxSleep)
		}
		w := time.Now()
		var ready []int
		var err error
		// A frame that arrives after the last read is due a link delay
		// after it arrived: until half the shortest delay has passed,
		// the loop need not wake for frames, and reads them together.
		if quietEnd := l.readAt.Add(l.quietFor); l.quiet != nil && w.Before(quietEnd) {
			if q := quietEnd.Sub(w); timeout < 0 || q < timeout {
				timeout = q
			}
			ready, err = l.quiet.WaitQuiet(timeout, l.ready)
		} else {
			ready, err = l.waiter.Wait(timeout, l.ready)
		}
		if err != nil {
			return fmt.Errorf("emu: wait: %w", err)
		}
		l.ready = ready
		if pending && len(ready) == 0 && timeout > 0 {
			l.stats.maxOversleep = max(l.stats.maxOversleep, time.Since(w)-timeout)
		}
		l.turn(ready, next, pending, w)
	}
	return nil
}

// arrival is a frame read from port pt, received at ns (Unix ns; 0 =
// unknown).
type arrival struct {
	pt *port
	p  *wire.Packet
	ns int64
	// late is how late the sending Loop wrote the frame (fabric time),
	// from its trailer; 0 without one.
	late clock.Duration
}

// turn is one batch: read the ready ports, deliver what they read at the
// fabric times it arrived, run what is due, write.
func (l *Loop) turn(ready []int, next clock.Time, pending bool, waited time.Time) {
	begin := time.Now()
	st := &l.stats
	st.phase[phaseWait] += begin.Sub(waited)
	due := pending && next <= addSat(l.fabricAt(begin), l.lead)
	switch {
	case len(ready) > 0:
		st.wakeRx++
	case due:
		st.wakeTimer++
	default:
		st.wakeOther++
	}
	if due {
		lag := begin.Sub(l.wallAt(next))
		st.lag(lag)
		l.behind.noteLag(lag)
	}
	full := false
	for _, i := range ready {
		if i >= 0 && i < len(l.ports) {
			full = l.ports[i].read() || full
		}
	}
	// The turn's clock is read after the reads, so every frame read
	// arrived at or before now.
	wall := time.Now()
	switch {
	case full:
		l.readAt = time.Time{} // frames may be waiting: no quiet sleep
	case len(l.arrivals) > 0:
		l.readAt = begin
	}
	st.phase[phaseRead] += wall.Sub(begin)
	now := l.fabricAt(wall)
	// The turn runs ahead to its horizon: events due up to lead after
	// now run now (see the package doc, "Running ahead").
	horizon := addSat(now, l.lead)
	l.aheadAt = wall.Add(l.leadWall)
	l.deliver(now, wall.UnixNano())
	l.eng.RunUntil(horizon)
	l.mu.Lock()
	posted := l.posted
	l.posted = nil
	l.mu.Unlock()
	if len(posted) > 0 {
		for _, f := range posted {
			f()
		}
		l.eng.RunUntil(horizon)
	}
	modelled := time.Now()
	st.phase[phaseModel] += modelled.Sub(wall)
	for _, p := range l.ports {
		p.flush()
	}
	end := time.Now()
	st.phase[phaseWrite] += end.Sub(modelled)
	st.batches++
	st.busy += end.Sub(begin)
	st.maxTurn = max(st.maxTurn, end.Sub(begin))
	l.checkBehind(end)
}

// deliver schedules the frames read this turn, each at the turn's now or,
// as Options.Replay says, at the fabric time it arrived: the engine then
// interleaves it, in timestamp order, with the events that fell due
// while the loop was late. A stamp is clamped into [Now, now]: the engine
// cannot go back before what it already ran (a frame that arrived while
// the previous turn ran), and a stamp after the turn's clock read can
// only come from a clock step. Stamps are CLOCK_REALTIME and fabric time
// is monotonic, so a stamp is taken as an age, nowNs − stamp (both real
// time, milliseconds apart), subtracted from now: slewing or stepping the
// real-time clock cannot shift fabric time. The age is recorded whatever
// the policy (emu_rx_replay_age_seconds: how late the loop read it).
func (l *Loop) deliver(now clock.Time, nowNs int64) {
	floor := l.eng.Now()
	for i, a := range l.arrivals {
		arrived := now
		if a.ns == 0 {
			a.pt.rxUnstamped++
		} else {
			age := nowNs - a.ns
			if age < 0 {
				a.pt.rxStampClamped++
				age = 0
			}
			arrived = now - clock.Time(l.toFabric(time.Duration(age))) - clock.Time(a.late)
			l.stats.age(now.Sub(max(arrived, floor)))
		}
		// arrived may precede fabric time 0 (a frame queued before Run)
		// or the engine's clock (read late); the link delay is short, so
		// the sum cannot overflow.
		// A link is a FIFO: a frame is never delivered before one
		// that arrived before it on the same port. (A sender's clock
		// read and its write are a few µs of wall apart, and a
		// preemption between them makes its trailer overstate one
		// frame's lateness; without the clamp the next frame could
		// overtake it.)
		t := max(arrived.Add(a.pt.delay), a.pt.lastDue)
		a.pt.lastDue = t
		switch {
		case t < now:
			// Read after it was due: the loop was late by more than
			// the link's delay.
			a.pt.rxLate++
			a.pt.rxLateBy += now.Sub(t)
			if l.replay == ReplayAll || l.replay == ReplayPauses && isXOFF(a.p) {
				t = max(t, floor)
			} else {
				t = max(now, floor)
			}
		case t < floor:
			// Due on time, but the last turn ran ahead past it: it
			// is delivered at the engine's clock, up to the lead late.
			a.pt.rxBehindLead++
			a.pt.rxBehindLeadBy += floor.Sub(t)
			t = floor
		}
		a.pt.onLink++
		l.eng.Schedule(t, (*ingress)(a.pt), a.p)
		l.arrivals[i] = arrival{}
	}
	l.arrivals = l.arrivals[:0]
}

// isXOFF reports whether p is a MAC control frame that pauses something:
// a PFC frame with a non-zero time for an enabled class, or a PAUSE with
// a non-zero time. XON (all zero) is not: see "Late turns".
func isXOFF(p *wire.Packet) bool {
	switch p.Kind {
	case wire.KindPause:
		return p.Quanta[0] != 0
	case wire.KindPFC:
		for c := range 8 {
			if p.ClassEnable&(1<<c) != 0 && p.Quanta[c] != 0 {
				return true
			}
		}
	}
	return false
}

// maxSleep caps one wait; an idle loop wakes this often.
const maxSleep = time.Hour
