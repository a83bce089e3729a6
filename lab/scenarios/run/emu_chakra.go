package run

import (
	"context"
	"fmt"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/lab/emulation/jobs"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/workloads/chakra"
)

// The emulation replays a Chakra trace on a step clock of its own, a
// discrete-event engine: compute nodes take their duration on it, and
// every communication operation is measured on the live lab — a
// collective as jobs.RunCollective runs it (its time as the nodes
// measure it in fabric time), a message as a one-message perf flow (its
// completion time) — and completes that long after it started on the step
// clock. Each operation runs alone on the lab, so the QP setup and API
// calls around it, which take wall time the step clock does not count,
// leave the step time independent of how busy the machine is; the cost is
// that operations that overlap in the step do not contend on the fabric,
// as they do in the simulator (docs/design.md, "Chakra traces in the
// emulation").

// emuOp is one communication operation waiting to run on the lab.
type emuOp struct {
	coll *chakra.Collective
	msg  *chakra.Message
	done func()
	took clock.Duration
	err  error
}

// emuComm is the replay's chakra.Comm in the emulation: it queues each
// operation for the driver (runChakra), which runs the queue on the lab.
type emuComm struct{ pending []*emuOp }

func (c *emuComm) Collective(x *chakra.Collective, done func()) {
	c.pending = append(c.pending, &emuOp{coll: x, done: done})
}

func (c *emuComm) Message(m *chakra.Message, done func()) {
	c.pending = append(c.pending, &emuOp{msg: m, done: done})
}

// runChakra replays the workload's steps, one after another.
func (e *emuRun) runChakra(ctx context.Context, j *emuJob) error {
	w := j.w
	refs := make([]jobs.NICRef, len(w.Ranks))
	for i, p := range w.Ranks {
		ref, err := e.nic(p)
		if err != nil {
			return err
		}
		refs[i] = ref
	}
	for it := range w.Iters {
		start := e.fabricNow()
		res, ops, err := e.chakraStep(ctx, j, refs)
		if err != nil {
			return fmt.Errorf("step %d: %w", it, err)
		}
		e.logf("job %s step %d: %v on the step clock, %d operations measured on the lab", w.Name, it, res.Iteration, ops)
		e.mu.Lock()
		j.chakra = append(j.chakra, res)
		j.chakraStarts = append(j.chakraStarts, clock.Time(start))
		e.mu.Unlock()
	}
	return nil
}

// chakraStep replays one step: the step clock runs every event of an
// instant, then the operations those events started run on the lab
// together, and their completions are scheduled as long after as they
// took.
func (e *emuRun) chakraStep(ctx context.Context, j *emuJob, refs []jobs.NICRef) (*chakra.Result, int, error) {
	eng := sim.New(e.sc.Seed)
	comm := &emuComm{}
	r, err := chakra.Start(j.w.Chakra.Traces, chakra.Options{Sched: eng, Comm: comm, Roofline: j.w.Chakra.Roofline})
	if err != nil {
		return nil, 0, err
	}
	ops := 0
	for {
		// Every event of this instant first: they may start more
		// operations at it.
		for t, ok := eng.Next(); ok && t == eng.Now(); t, ok = eng.Next() {
			eng.Step()
		}
		if len(comm.pending) > 0 {
			batch := comm.pending
			comm.pending = nil
			if err := e.measure(ctx, j, refs, batch); err != nil {
				return nil, ops, err
			}
			for _, op := range batch {
				eng.AfterFunc(op.took, op.done)
			}
			ops += len(batch)
			e.progress()
			continue
		}
		if !eng.Step() {
			break
		}
	}
	res, err := r.Result()
	return res, ops, err
}

// measure runs a batch of operations on the lab, one after another, and
// records how long each took in fabric time. Each runs alone: operations
// that jobs.RunCollective would start at different wall instants (its QP
// setup takes a varying wall time) would overlap on the fabric by chance,
// and the step time would depend on how busy the machine is.
func (e *emuRun) measure(ctx context.Context, j *emuJob, refs []jobs.NICRef, batch []*emuOp) error {
	for _, op := range batch {
		if op.took, op.err = e.runOp(ctx, j, refs, op); op.err != nil {
			return op.err
		}
	}
	return nil
}

// runOp runs one operation on the lab.
func (e *emuRun) runOp(ctx context.Context, j *emuJob, refs []jobs.NICRef, op *emuOp) (clock.Duration, error) {
	w := j.w
	if c := op.coll; c != nil {
		kind, size, _ := simlab.ChakraOp(c.Type, c.Size(), len(c.Ranks))
		spec := jobs.CollectiveSpec{Op: kind.String(), Sizes: []int64{size}, Warmup: 0, Iters: 1, Seed: e.sc.Seed,
			Mode: w.Mode, CC: ccName(w), Paths: w.Paths}
		for _, rk := range c.Ranks {
			spec.Ranks = append(spec.Ranks, refs[rk])
		}
		res, err := jobs.RunCollective(ctx, spec, nil)
		if err != nil {
			return 0, fmt.Errorf("group %q collective %d (%s of %d B): %w", c.Group, c.Seq, c.Type, size, err)
		}
		if len(res) != 1 {
			return 0, fmt.Errorf("group %q collective %d: %d results", c.Group, c.Seq, len(res))
		}
		return clock.Duration(res[0].TimeUs * float64(clock.Microsecond)), nil
	}
	m := op.msg
	size := max(m.Size, 1)
	rep, err := jobs.RunPerf(ctx, refs[m.Src], refs[m.Dst], jobs.PerfSpec{Op: "write", Size: int(size), Iterations: 1, QPs: 1,
		Mode: w.Mode, CC: ccName(w), Paths: w.Paths, Seed: e.sc.Seed}, nil)
	if err != nil {
		return 0, fmt.Errorf("message %d→%d (%s, %d B): %w", m.Src, m.Dst, m.Send, size, err)
	}
	if rep.Client.FCT == nil || rep.Client.FCT.Count() != 1 {
		return 0, fmt.Errorf("message %d→%d (%s): no completion time", m.Src, m.Dst, m.Send)
	}
	return rep.Client.FCT.Stats().Median, nil
}

// chakraStallWall is how long past its end an emulated run waits for a
// chakra job that measures no operation.
const chakraStallWall = 60 * time.Second

// progress notes that a job moved on: the run's watchdog waits as long as
// jobs do (emuRun.run).
func (e *emuRun) progress() { e.lastProgress.Store(time.Now().UnixNano()) }

// progressedWithin reports whether a job moved on within d.
func (e *emuRun) progressedWithin(d time.Duration) bool {
	return time.Since(time.Unix(0, e.lastProgress.Load())) < d
}
