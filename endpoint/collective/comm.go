package collective

import (
	"errors"
	"fmt"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
)

// Defaults of Config, after NCCL's ring: a 4 MiB channel buffer split into
// NCCL_STEPS = 8 slots gives 512 KiB slices with 8 in flight.
const (
	DefaultSliceBytes = 512 << 10
	DefaultWindow     = 8
)

// Limits imposed by the immediate encoding (see imm).
const (
	MaxRanks  = 1 << (32 - stepShift - 1) // 2(n-1) steps must fit the step field
	maxSlices = 1 << stepShift
	stepShift = 20
)

// Config describes a communicator.
type Config struct {
	Ranks      int      // number of ranks, >= 2
	Type       DataType // element type (sum is the only reduction)
	SliceBytes int      // bytes per write; a chunk is cut into slices; 0 means DefaultSliceBytes
	Window     int      // writes each rank keeps in flight; 0 means DefaultWindow
	Check      bool     // carry real data, fill inputs and verify every element
	Seed       uint64   // seed of the fill

	// Local lists the ranks this communicator drives, for distributed runs
	// where each process (an emulated host) runs only its own ranks and the
	// other ranks' writes arrive through the Transport. nil means every
	// rank is local. See the package documentation, "Distributed mode".
	Local []int
	// Barrier synchronizes the processes of a distributed run; it is
	// required when Local is a strict subset of the ranks. The Comm calls
	// Barrier(iter, release) when it is ready to start iteration iter of a
	// run (iter 0: every local region is registered; iter k > 0: every
	// local rank finished iteration k-1, its outputs were checked and its
	// regions cleared), and starts the iteration once release is called —
	// which the caller does when every process has reached the barrier.
	// release may be called from inside Barrier or later, once.
	Barrier func(iter int, release func())
	// Offload, when set, runs Check's data work — filling the local
	// inputs before an iteration, verifying and clearing the local outputs
	// after it — off the scheduler's goroutine: it must call work on
	// another goroutine and then, back on the scheduler's, then. The run
	// waits for then before it goes on (arrivals meanwhile are held, and
	// no rank passes the next barrier), so nothing else touches the
	// buffers. An emulated host sets it, so that filling and checking
	// megabytes does not stall its datapath for milliseconds; nil does the
	// work inline (the simulator: no wall clock, same results).
	Offload func(work, then func())
}

// Comm runs collectives over a Transport, one at a time, driven entirely by
// Transport callbacks and the Scheduler. It is not safe for concurrent use:
// like every model it lives on one goroutine.
type Comm struct {
	sched clock.Scheduler
	tr    Transport
	cfg   Config
	local []bool // by rank: driven and checked here

	// counters
	writes, bytes, iterations, wrongTotal uint64

	// Every iteration, warm-up included: its fabric time, and its size
	// times the bus factor, so that busbw over any window is
	// Δbus bytes / Δiteration seconds (nccl-tests' busbw, in bytes/s).
	iterTime clock.Duration
	busBytes float64

	run *run // the run in progress, nil when idle
}

// New returns a communicator of cfg.Ranks ranks over tr.
func New(sched clock.Scheduler, tr Transport, cfg Config) (*Comm, error) {
	if cfg.Ranks < 2 || cfg.Ranks > MaxRanks {
		return nil, fmt.Errorf("collective: %d ranks, want 2..%d", cfg.Ranks, MaxRanks)
	}
	if cfg.Type != Float32 && cfg.Type != Int32 {
		return nil, fmt.Errorf("collective: unknown data type %d", cfg.Type)
	}
	if cfg.SliceBytes == 0 {
		cfg.SliceBytes = DefaultSliceBytes
	}
	if cfg.SliceBytes < elemSize {
		return nil, fmt.Errorf("collective: slice of %d bytes, want >= %d", cfg.SliceBytes, elemSize)
	}
	if cfg.Window == 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.Window < 0 {
		return nil, fmt.Errorf("collective: window %d, want >= 1", cfg.Window)
	}
	local, err := localSet(cfg)
	if err != nil {
		return nil, err
	}
	return &Comm{sched: sched, tr: tr, cfg: cfg, local: local}, nil
}

// localSet validates cfg.Local and returns it as a per-rank set.
func localSet(cfg Config) ([]bool, error) {
	local := make([]bool, cfg.Ranks)
	if cfg.Local == nil {
		for i := range local {
			local[i] = true
		}
		return local, nil
	}
	if len(cfg.Local) == 0 {
		return nil, errors.New("collective: Local lists no rank (nil means all)")
	}
	for _, r := range cfg.Local {
		if r < 0 || r >= cfg.Ranks {
			return nil, fmt.Errorf("collective: local rank %d outside 0..%d", r, cfg.Ranks-1)
		}
		if local[r] {
			return nil, fmt.Errorf("collective: local rank %d listed twice", r)
		}
		local[r] = true
	}
	if len(cfg.Local) < cfg.Ranks && cfg.Barrier == nil {
		return nil, errors.New("collective: a distributed communicator (Local is a subset) needs a Barrier")
	}
	return local, nil
}

// Config returns the communicator's configuration with defaults filled in.
func (c *Comm) Config() Config { return c.cfg }

// ErrBusy is returned when a run is started while another is in progress.
var ErrBusy = errors.New("collective: a run is already in progress")

// Run runs op on size bytes (nccl-tests' size, see Layout) warmup+iters
// times back to back — each iteration starts when the previous one has
// completed on every rank — and calls done with the average time of the
// measured iterations. done runs from the scheduler, never from inside Run.
func (c *Comm) Run(op Op, size int64, warmup, iters int, done func(Result, error)) {
	fail := func(err error) { c.sched.AfterFunc(0, func() { done(Result{}, err) }) }
	if c.run != nil && !c.run.failed.Load() {
		fail(ErrBusy)
		return
	}
	if iters < 1 || warmup < 0 {
		fail(fmt.Errorf("collective: %d warmup and %d iterations, want >= 0 and >= 1", warmup, iters))
		return
	}
	lay, err := NewLayout(op, c.cfg.Ranks, size)
	if err != nil {
		fail(err)
		return
	}
	sliceElems := int64(c.cfg.SliceBytes / elemSize)
	if (lay.chunkMax()+sliceElems-1)/sliceElems > maxSlices {
		fail(fmt.Errorf("collective: %d B needs more than %d slices of %d B per chunk", size, maxSlices, c.cfg.SliceBytes))
		return
	}
	r := newRun(c, lay, warmup, iters, done)
	if c.run != nil {
		c.retire(c.run) // a failed run
	}
	c.run = r
	r.listen()
	r.next()
}

// Sweep runs op on each size in turn (see Run) and calls done with all the
// results, or the first error.
func (c *Comm) Sweep(op Op, sizes []int64, warmup, iters int, done func([]Result, error)) {
	var out []Result
	var next func(i int)
	next = func(i int) {
		if i == len(sizes) {
			done(out, nil)
			return
		}
		c.Run(op, sizes[i], warmup, iters, func(res Result, err error) {
			if err != nil {
				done(out, fmt.Errorf("size %d: %w", sizes[i], err))
				return
			}
			out = append(out, res)
			next(i + 1)
		})
	}
	next(0)
}

// retire folds the counters of run r, ended or failed, into the Comm's
// and clears the run in progress.
func (c *Comm) retire(r *run) {
	c.writes, c.bytes = c.counters()
	c.run = nil
}

// counters returns the writes and bytes posted so far: the Comm's, and
// those of the ranks of the run in progress (or failed last).
func (c *Comm) counters() (writes, bytes uint64) {
	writes, bytes = c.writes, c.bytes
	if r := c.run; r != nil {
		for i := range r.ranks {
			writes += r.ranks[i].writes
			bytes += r.ranks[i].bytes
		}
	}
	return writes, bytes
}

// Expecting reports whether a local rank of the iteration in progress
// still expects an arrival. Until that arrival's write is acknowledged the
// iteration cannot end: over a network, not before the arrival plus an
// acknowledgement's way back. A partitioned simulation relies on that to
// run windows shorter than that way side by side, and only the others one
// event at a time, where an iteration's end starts the next one on every
// rank at once. It must not run while ranks are being driven (between a
// simulation's windows, it is not).
func (c *Comm) Expecting() bool { return c.run != nil && c.run.expecting() }

// Busy reports whether a run is in progress (not ended, not failed).
func (c *Comm) Busy() bool { return c.run != nil && !c.run.failed.Load() }

// Collect emits the communicator's counters.
func (c *Comm) Collect(emit func(telemetry.Sample)) {
	writes, bytes := c.counters()
	for _, s := range []struct {
		name string
		v    uint64
	}{
		{"collective_writes_total", writes},
		{"collective_write_bytes_total", bytes},
		{"collective_iterations_total", c.iterations},
		{"collective_wrong_elements_total", c.wrongTotal},
	} {
		emit(telemetry.Sample{Name: s.name, Kind: telemetry.Counter, Value: float64(s.v)})
	}
	emit(telemetry.Sample{Name: "collective_iteration_seconds_total", Kind: telemetry.Counter, Value: c.iterTime.Seconds()})
	emit(telemetry.Sample{Name: "collective_bus_bytes_total", Kind: telemetry.Counter, Value: c.busBytes})
}

var _ telemetry.Source = (*Comm)(nil)
