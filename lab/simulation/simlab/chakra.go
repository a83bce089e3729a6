package simlab

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/endpoint/rdmacomm"
	"github.com/rocelab/rocelab/workloads/chakra"
	"github.com/rocelab/rocelab/workloads/chakra/etpb"
)

// ChakraSpec is a training step from MLCommons Chakra execution traces,
// replayed on the lab's NICs (workloads/chakra): compute nodes take their
// duration on each rank's one compute stream, collectives run on the
// collective engine over the process group's NICs (rings; all-to-all
// direct), sends and receives are RDMA writes between the two NICs.
type ChakraSpec struct {
	// Name labels the job's samples (default "chakraN").
	Name string
	// Traces are the ranks' traces, by rank (chakra.LoadDir).
	Traces []*chakra.Trace
	// Ranks are the NIC names of ranks 0, 1, …: one per trace.
	Ranks []string
	// Iters is how many times the step runs back to back (default 1):
	// iteration i+1 starts when every rank finished iteration i.
	Iters int
	// Roofline, if set, times GPU compute nodes (chakra.Options.Roofline).
	Roofline *chakra.Roofline
	// Mode, CC and Paths configure every QP (defaults: the lab's).
	Mode, CC string
	Paths    int
	// Start is the fabric time the job starts at.
	Start clock.Time
}

// ChakraJob is a running Chakra replay.
type ChakraJob struct {
	l      *Lab
	spec   ChakraSpec
	qp     endpoint.QPConfig
	nics   []*endpoint.NIC
	groups map[string]*chakraGroup
	pairs  map[[2]int]*chakraPair
	replay *chakra.Replay
	iter   int
	start  clock.Time
	res    []*chakra.Result // by iteration
	starts []clock.Time     // by iteration
	err    error
	done   bool
	colls  int // collectives run
	msgs   int // messages carried
}

// chakraGroup is one process group: its communicators, a ring for the
// ring collectives and a full mesh for all-to-all, made on first use (the
// replay runs a group's collectives one at a time).
type chakraGroup struct {
	ranks []int
	ring  *collective.Comm
	mesh  *collective.Comm
}

// chakraPair carries messages from one rank to another: a QP pair, the
// receive region sized for the largest message, and the messages in
// flight by sequence (the write's immediate).
type chakraPair struct {
	tr      *rdmacomm.Transport
	pending map[uint32]*msgInFlight
}

type msgInFlight struct {
	left int // of the local completion and the arrival
	done func()
}

// ChakraOp returns the collective engine's operation and size (nccl-tests'
// size: the larger buffer of one rank) for a Chakra collective of type t
// and comm_size size on n ranks. comm_size is each rank's input, as
// Chakra's converter writes it from the collective's input tensor and as
// ASTRA-sim reads it: the size itself for an all-reduce, a reduce-scatter
// (its whole input) and an all-to-all, n times it for an all-gather (its
// output gathers n inputs). BARRIER is a 4-byte-per-rank all-reduce, as
// NCCL's barrier is. REDUCE, GATHER, SCATTER and BROADCAST are not run:
// ok is false.
func ChakraOp(t etpb.CollectiveCommType, size int64, n int) (op collective.Op, bytes int64, ok bool) {
	switch t {
	case etpb.CollectiveCommType_ALL_REDUCE:
		return collective.AllReduce, size, true
	case etpb.CollectiveCommType_ALL_GATHER:
		return collective.AllGather, size * int64(n), true
	case etpb.CollectiveCommType_REDUCE_SCATTER, etpb.CollectiveCommType_REDUCE_SCATTER_BLOCK:
		return collective.ReduceScatter, size, true
	case etpb.CollectiveCommType_ALL_TO_ALL:
		return collective.AllToAll, size, true
	case etpb.CollectiveCommType_BARRIER:
		return collective.AllReduce, 4 * int64(n), true
	}
	return 0, 0, false
}

// ChakraSupported says why traces cannot be run, or nil: a collective of
// a type the engine does not run, named with its file and node.
func ChakraSupported(traces []*chakra.Trace) error {
	var errs chakra.ErrorList
	for _, t := range traces {
		for _, n := range t.Nodes {
			if n.Kind != chakra.Coll {
				continue
			}
			if _, _, ok := ChakraOp(n.CollType, n.Size, 2); !ok {
				ref := n.Ref()
				errs = append(errs, &chakra.Error{File: t.File, Rank: t.Rank, Node: &ref,
					Msg: fmt.Sprintf("collective %s is not one rocelab runs (ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, BARRIER)", n.CollType)})
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// Chakra adds a Chakra replay job. It runs on a lab of one engine: its
// compute stream and message completions act on every rank at once.
func (l *Lab) Chakra(spec ChakraSpec) (*ChakraJob, error) {
	if spec.Name == "" {
		spec.Name = "chakra" + strconv.Itoa(len(l.jobs))
	}
	if spec.Iters <= 0 {
		spec.Iters = 1
	}
	l.defaultModeCC(&spec.Mode, &spec.CC)
	fail := func(err error) (*ChakraJob, error) { return nil, fmt.Errorf("chakra %s: %w", spec.Name, err) }
	if err := l.checkOneEngine("Chakra replay"); err != nil {
		return fail(err)
	}
	if l.opts.Raw {
		return fail(fmt.Errorf("needs a payload-free lab (Options.Raw false)"))
	}
	if len(spec.Traces) != len(spec.Ranks) {
		return fail(fmt.Errorf("%d traces for %d NICs: give one NIC per rank", len(spec.Traces), len(spec.Ranks)))
	}
	if err := ChakraSupported(spec.Traces); err != nil {
		return fail(err)
	}
	mode, err := endpoint.ParseMode(spec.Mode)
	if err != nil {
		return fail(err)
	}
	if _, err := l.reg.Get(spec.CC); err != nil {
		return fail(err)
	}
	j := &ChakraJob{l: l, spec: spec, groups: map[string]*chakraGroup{}, pairs: map[[2]int]*chakraPair{},
		qp: endpoint.QPConfig{Mode: mode, CC: spec.CC, Paths: spec.Paths, Window: l.opts.QPWindow, Timeout: l.opts.QPTimeout}}
	seen := map[*endpoint.NIC]string{}
	for _, r := range spec.Ranks {
		n, err := l.nic(r)
		if err != nil {
			return fail(err)
		}
		if o, dup := seen[n]; dup {
			return fail(fmt.Errorf("NIC %s is given to two ranks (%s)", r, o))
		}
		seen[n] = r
		j.nics = append(j.nics, n)
	}
	if err := j.connectPairs(); err != nil {
		return fail(err)
	}
	l.addJob(j)
	l.at(spec.Start, j.begin)
	return j, nil
}

// connectPairs connects a QP pair for every (sender, receiver) the traces
// hold a send for, its receive region as large as the largest send.
func (j *ChakraJob) connectPairs() error {
	largest := map[[2]int]int64{}
	for rank, t := range j.spec.Traces {
		for _, n := range t.Nodes {
			if n.Kind == chakra.Send {
				k := [2]int{rank, n.Peer}
				largest[k] = max(largest[k], n.Size, 1)
			}
		}
	}
	keys := make([][2]int, 0, len(largest))
	for k := range largest {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int) int { return a[0]*len(j.nics) + a[1] - b[0]*len(j.nics) - b[1] })
	for _, k := range keys {
		tr, err := rdmacomm.New(rdmacomm.Options{NICs: []*endpoint.NIC{j.nics[k[0]], j.nics[k[1]]}, Pairs: rdmacomm.Ring, QP: j.qp})
		if err != nil {
			return fmt.Errorf("messages %d→%d: %w", k[0], k[1], err)
		}
		p := &chakraPair{tr: tr, pending: map[uint32]*msgInFlight{}}
		tr.Listen(1, nil, int(largest[k]), func(_, _, _ int, imm uint32) { p.settle(imm) })
		j.pairs[k] = p
	}
	return nil
}

func (p *chakraPair) settle(imm uint32) {
	m := p.pending[imm]
	if m == nil {
		return
	}
	if m.left--; m.left == 0 {
		delete(p.pending, imm)
		m.done()
	}
}

// begin starts the next iteration.
func (j *ChakraJob) begin() {
	j.start = j.l.now()
	r, err := chakra.Start(j.spec.Traces, chakra.Options{Sched: j.l, Comm: j, OnDone: j.iterDone, Roofline: j.spec.Roofline})
	if err != nil {
		j.fail(err)
		return
	}
	j.replay = r
}

// iterDone is the replay's OnDone: the iteration's result, then the next.
func (j *ChakraJob) iterDone() {
	// OnDone may run from inside Start (a trace without communication or
	// compute); take the result once the replay is stored.
	j.l.at(j.l.now(), func() {
		res, err := j.replay.Result()
		if err != nil {
			j.fail(err)
			return
		}
		j.res = append(j.res, res)
		j.starts = append(j.starts, j.start)
		if j.iter++; j.iter < j.spec.Iters {
			j.begin()
			return
		}
		j.done = true
		j.l.finished()
	})
}

func (j *ChakraJob) fail(err error) {
	if j.done {
		return
	}
	j.err, j.done = fmt.Errorf("chakra %s: %w", j.spec.Name, err), true
	j.l.finished()
}

// Collective implements chakra.Comm: c runs on its group's communicator.
func (j *ChakraJob) Collective(c *chakra.Collective, done func()) {
	if j.err != nil {
		return
	}
	g := j.groups[c.Group]
	if g == nil {
		g = &chakraGroup{ranks: c.Ranks}
		j.groups[c.Group] = g
	}
	op, size, _ := ChakraOp(c.Type, c.Size(), len(c.Ranks))
	comm, err := j.comm(g, op)
	if err != nil {
		j.fail(fmt.Errorf("group %q: %w", c.Group, err))
		return
	}
	j.colls++
	comm.Run(op, size, 0, 1, func(_ collective.Result, err error) {
		if err != nil {
			j.fail(fmt.Errorf("group %q collective %d (%s of %d B): %w", c.Group, c.Seq, c.Type, size, err))
			return
		}
		done()
	})
}

// comm returns g's communicator for op, connecting it on first use.
func (j *ChakraJob) comm(g *chakraGroup, op collective.Op) (*collective.Comm, error) {
	slot, pairs := &g.ring, rdmacomm.Ring
	if op == collective.AllToAll {
		slot, pairs = &g.mesh, rdmacomm.All
		if CollectiveOnOneEngine(op, len(g.ranks)) {
			pairs = rdmacomm.OnDemand
		}
	}
	if *slot != nil {
		return *slot, nil
	}
	nics := make([]*endpoint.NIC, len(g.ranks))
	for i, r := range g.ranks {
		nics[i] = j.nics[r]
	}
	tr, err := rdmacomm.New(rdmacomm.Options{NICs: nics, Pairs: pairs, QP: j.qp})
	if err != nil {
		return nil, err
	}
	c, err := collective.New(j.l, tr, collective.Config{Ranks: len(nics), Type: collective.Float32, Seed: j.l.opts.Seed})
	if err != nil {
		return nil, err
	}
	*slot = c
	return c, nil
}

// Message implements chakra.Comm: one RDMA WRITE WITH IMMEDIATE of the
// message's size; done once the receiver has it and the sender's
// completion came back.
func (j *ChakraJob) Message(m *chakra.Message, done func()) {
	p := j.pairs[[2]int{m.Src, m.Dst}]
	if p == nil {
		j.fail(fmt.Errorf("no QP from rank %d to rank %d (message %s)", m.Src, m.Dst, m.Send))
		return
	}
	imm := uint32(len(p.pending)) // unique among those in flight
	for p.pending[imm] != nil {
		imm++
	}
	p.pending[imm] = &msgInFlight{left: 2, done: done}
	j.msgs++
	err := p.tr.Write(collective.Write{From: 0, To: 1, Len: int(m.Size), Imm: imm}, func(err error) {
		if err != nil {
			j.fail(fmt.Errorf("message %d→%d (%s): %w", m.Src, m.Dst, m.Send, err))
			return
		}
		p.settle(imm)
	})
	if err != nil {
		j.fail(fmt.Errorf("message %d→%d (%s): %w", m.Src, m.Dst, m.Send, err))
	}
}

// Name returns the job's name.
func (j *ChakraJob) Name() string { return j.spec.Name }

// Spec returns the job's specification, defaults filled in.
func (j *ChakraJob) Spec() ChakraSpec { return j.spec }

// Done reports whether every iteration finished (or the job failed).
func (j *ChakraJob) Done() bool { return j.done }

// Err returns the error that ended the job, if any.
func (j *ChakraJob) Err() error { return j.err }

// Results returns each finished iteration's replay result.
func (j *ChakraJob) Results() []*chakra.Result { return j.res }

// Starts returns the fabric time each finished iteration started at.
func (j *ChakraJob) Starts() []clock.Time { return j.starts }

// Counts returns the collectives run and messages carried so far.
func (j *ChakraJob) Counts() (collectives, messages int) { return j.colls, j.msgs }

// Collect emits the job's samples (ChakraSamples).
func (j *ChakraJob) Collect(emit func(telemetry.Sample)) { ChakraSamples(emit, j.spec.Name, j.res) }

// ChakraSamples emits, per step of a chakra job, the step time and, per
// rank, its compute, communication and exposed communication time
// (seconds), labelled job, iter and rank: what both clocks give the
// expectations.
func ChakraSamples(emit func(telemetry.Sample), job string, steps []*chakra.Result) {
	jl := telemetry.Label{Name: "job", Value: job}
	for i, r := range steps {
		it := telemetry.Label{Name: "iter", Value: strconv.Itoa(i)}
		emit(telemetry.Sample{Name: "chakra_iteration_seconds", Kind: telemetry.Gauge, Labels: []telemetry.Label{jl, it}, Value: r.Iteration.Seconds()})
		for _, rk := range r.Ranks {
			l := []telemetry.Label{jl, it, {Name: "rank", Value: strconv.Itoa(rk.Rank)}}
			emit(telemetry.Sample{Name: "chakra_compute_seconds", Kind: telemetry.Gauge, Labels: l, Value: rk.Compute.Seconds()})
			emit(telemetry.Sample{Name: "chakra_comm_seconds", Kind: telemetry.Gauge, Labels: l, Value: rk.Comm.Seconds()})
			emit(telemetry.Sample{Name: "chakra_exposed_comm_seconds", Kind: telemetry.Gauge, Labels: l, Value: rk.Exposed.Seconds()})
		}
	}
}
