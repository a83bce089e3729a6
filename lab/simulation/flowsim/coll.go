package flowsim

import (
	"fmt"
	"strconv"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/wire"
)

// CollSpec is an NCCL-style collective job, as simlab.CollSpec (payload
// free: no data check).
type CollSpec struct {
	Name          string
	Op            string
	Ranks         []string
	Sizes         []int64
	Iters, Warmup int
	Mode          string
	Paths         int
	Start         clock.Time
}

// CollJob is a running collective job: the collective engine
// (endpoint/collective, its algorithms, slices and windows as in the
// packet simulator) over a Transport whose writes are flow-level
// messages.
type CollJob struct {
	l       *Lab
	spec    CollSpec
	op      collective.Op
	tr      *transport
	comm    *collective.Comm
	results []collective.Result
	err     error
	done    bool
	start   clock.Time
	end     clock.Time
}

// onDemandRanks is simlab's: an all-to-all of more ranks connects its QP
// pairs at their first write.
const onDemandRanks = 128

// Collective adds a collective job; it starts at spec.Start. Its QPs are
// numbered now, pair by pair as rdmacomm connects them (ring neighbours,
// or every pair for an all-to-all; past 128 ranks at a pair's first
// write, and never torn down, where the packet simulator destroys idle
// pairs beyond 16 per rank and so numbers later QPs otherwise).
func (l *Lab) Collective(spec CollSpec) (*CollJob, error) {
	if spec.Op == "" {
		spec.Op = "all_reduce"
	}
	if len(spec.Ranks) == 0 {
		spec.Ranks = l.names
	}
	if len(spec.Sizes) == 0 {
		spec.Sizes = []int64{64 << 20}
	}
	if spec.Iters <= 0 {
		spec.Iters = 5
	}
	if spec.Warmup < 0 {
		spec.Warmup = 0
	} else if spec.Warmup == 0 {
		spec.Warmup = 1
	}
	if spec.Mode == "" {
		spec.Mode = l.opts.Mode
	}
	j := &CollJob{l: l, spec: spec}
	var err error
	if j.op, err = collective.ParseOp(spec.Op); err != nil {
		return nil, fmt.Errorf("collective %s: %w", spec.Name, err)
	}
	mode, err := endpoint.ParseMode(spec.Mode)
	if err != nil {
		return nil, fmt.Errorf("collective %s: %w", spec.Name, err)
	}
	ranks := make([]*nic, len(spec.Ranks))
	for i, r := range spec.Ranks {
		if ranks[i], err = l.nic(r); err != nil {
			return nil, fmt.Errorf("collective %s: %w", spec.Name, err)
		}
	}
	all := j.op == collective.AllToAll
	tr, err := l.newTransport(ranks, mode, spec.Paths, all, all && len(ranks) > onDemandRanks)
	if err != nil {
		return nil, fmt.Errorf("collective %s: %w", spec.Name, err)
	}
	n := len(ranks)
	j.tr = tr
	if j.comm, err = collective.New(l.e, tr, collective.Config{Ranks: n, Type: collective.Float32, Seed: l.opts.Seed}); err != nil {
		return nil, fmt.Errorf("collective %s: %w", spec.Name, err)
	}
	l.addJob(j)
	l.At(spec.Start, j.begin)
	return j, nil
}

func (j *CollJob) begin() {
	j.start = j.l.Now()
	j.comm.Sweep(j.op, j.spec.Sizes, j.spec.Warmup, j.spec.Iters, func(res []collective.Result, err error) {
		j.results, j.done = res, true
		if err != nil {
			j.err = fmt.Errorf("collective %s: %w", j.spec.Name, err)
		} else {
			j.end = j.l.Now()
		}
		j.l.finished()
	})
}

// Done reports whether the sweep finished (or failed).
func (j *CollJob) Done() bool { return j.done }

// Err returns the error that ended the sweep, if any.
func (j *CollJob) Err() error { return j.err }

// Results returns one nccl-tests line per size completed.
func (j *CollJob) Results() []collective.Result { return j.results }

// Collect emits, per size, busbw, algbw and time (labelled job, op and
// size), as simlab.CollJob does.
func (j *CollJob) Collect(emit func(telemetry.Sample)) {
	job := telemetry.Label{Name: "job", Value: j.spec.Name}
	for _, r := range j.results {
		l := []telemetry.Label{job, {Name: "op", Value: r.Op}, {Name: "size", Value: strconv.FormatInt(r.Size, 10)}}
		emit(telemetry.Sample{Name: "collective_busbw_bytes_per_second", Kind: telemetry.Gauge, Labels: l, Value: r.BusBW * 1e9})
		emit(telemetry.Sample{Name: "collective_algbw_bytes_per_second", Kind: telemetry.Gauge, Labels: l, Value: r.AlgBW * 1e9})
		emit(telemetry.Sample{Name: "collective_time_seconds", Kind: telemetry.Gauge, Labels: l, Value: r.TimeUs / 1e6})
	}
}

// transport is collective.Transport over flow-level QPs: a write is a
// message of its QP (one per ordered pair of ranks), its arrival the
// message landing, its completion the acknowledgement's return.
type transport struct {
	l        *Lab
	mode     endpoint.Mode
	paths    int
	ranks    []*nic
	listen   []collective.ArrivalFunc
	conns    map[[2]int]*QP
	onDemand bool
}

var _ collective.Transport = (*transport)(nil)

// newTransport returns the transport of ranks with their pairs connected
// as rdmacomm.New connects them: ring neighbours, or every pair (all),
// or none yet (onDemand: at a pair's first write).
func (l *Lab) newTransport(ranks []*nic, mode endpoint.Mode, paths int, all, onDemand bool) (*transport, error) {
	tr := &transport{l: l, mode: mode, paths: paths, conns: map[[2]int]*QP{}, ranks: ranks,
		listen: make([]collective.ArrivalFunc, len(ranks)), onDemand: onDemand}
	n := len(ranks)
	for a := range n {
		for b := a + 1; b < n && !onDemand; b++ {
			if all || b == a+1 || a == 0 && b == n-1 {
				if err := tr.connect(a, b); err != nil {
					return nil, err
				}
			}
		}
	}
	return tr, nil
}

// connect numbers the QPs a→b and b→a as rdmacomm creates them (a's,
// then b's) and routes both.
func (t *transport) connect(a, b int) error {
	ea := qpEnd{t.ranks[a], t.ranks[a].newQPN()}
	eb := qpEnd{t.ranks[b], t.ranks[b].newQPN()}
	ab, err := t.l.newQP(ea, eb, t.mode, t.paths)
	if err != nil {
		return err
	}
	ba, err := t.l.newQP(eb, ea, t.mode, t.paths)
	if err != nil {
		return err
	}
	t.conns[[2]int{a, b}], t.conns[[2]int{b, a}] = ab, ba
	return nil
}

// Listen implements collective.Transport (payload free: only lengths).
func (t *transport) Listen(rank int, _ []byte, _ int, arrived collective.ArrivalFunc) {
	t.listen[rank] = arrived
}

// Write implements collective.Transport.
func (t *transport) Write(w collective.Write, done func(error)) error {
	n := len(t.ranks)
	if w.From < 0 || w.From >= n || w.To < 0 || w.To >= n || w.From == w.To {
		return fmt.Errorf("flowsim: write %d→%d outside ranks 0..%d", w.From, w.To, n-1)
	}
	q := t.conns[[2]int{w.From, w.To}]
	if q == nil {
		if !t.onDemand {
			return fmt.Errorf("flowsim: ranks %d and %d are not connected", w.From, w.To)
		}
		if err := t.connect(min(w.From, w.To), max(w.From, w.To)); err != nil {
			return err
		}
		q = t.conns[[2]int{w.From, w.To}]
	}
	arrived := t.listen[w.To]
	bytes := wire.MessageOnWire(w.Len, t.ranks[w.From].mtu, wire.RETHLen) + wire.ImmDtLen
	q.Post(bytes, func() { arrived(w.From, w.Off, w.Len, w.Imm) }, func() { done(nil) })
	return nil
}
