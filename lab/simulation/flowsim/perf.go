package flowsim

import (
	"fmt"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/fct"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/wire"
)

// PerfSpec is a perftest-style job, as simlab.PerfSpec: streams of RDMA
// WRITEs from From[i] to To[i] (pairwise), QPs per flow, each QP keeping
// TxDepth messages posted, Iterations messages each or posting until
// Start+Duration.
type PerfSpec struct {
	Name       string
	From, To   []string
	Size       int
	Iterations int
	Duration   clock.Duration
	QPs        int
	TxDepth    int
	Mode       string
	Paths      int
	Start      clock.Time
}

// PerfJob is a running perf job.
type PerfJob struct {
	l        *Lab
	spec     PerfSpec
	mode     endpoint.Mode
	flows    []*Flow
	left     int
	start    clock.Time
	deadline clock.Time
	started  bool
	err      error
}

// Flow is one From → To stream of a perf job.
type Flow struct {
	j          *PerfJob
	From, To   string
	qps        []*perfQP
	left       int
	start, end clock.Time
	msgs       int64
	bytes      int64
	rxAtEnd    int64
	fcts       fct.Dist
	finished   bool
}

type perfQP struct {
	f      *Flow
	q      *QP
	posted int
	done   int
	posts  []clock.Time
	wire   int // one message's bytes on the wire
	ended  bool
}

// FlowResult is what one flow measured, as simlab.FlowResult.
type FlowResult struct {
	From, To    string
	Messages    int64
	Bytes       int64
	Start, End  clock.Time
	GoodputGbps float64
	FCT         fct.Stats
}

// Perf adds a perf job (pairwise flows); it starts at spec.Start. Its QPs
// are numbered when it starts, as the packet simulator numbers them
// (client on From, then server on To, flow by flow).
func (l *Lab) Perf(spec PerfSpec) (*PerfJob, error) {
	if len(spec.From) != len(spec.To) {
		return nil, fmt.Errorf("perf %s: %d senders and %d receivers", spec.Name, len(spec.From), len(spec.To))
	}
	if len(spec.From) == 0 {
		return nil, fmt.Errorf("perf %s: no flows", spec.Name)
	}
	if spec.Size <= 0 {
		spec.Size = 65536
	}
	if spec.Iterations <= 0 && spec.Duration <= 0 {
		spec.Iterations = 1000
	}
	spec.QPs = max(spec.QPs, 1)
	if spec.TxDepth <= 0 {
		spec.TxDepth = 32
	}
	if spec.Mode == "" {
		spec.Mode = l.opts.Mode
	}
	mode, err := endpoint.ParseMode(spec.Mode)
	if err != nil {
		return nil, fmt.Errorf("perf %s: %w", spec.Name, err)
	}
	j := &PerfJob{l: l, spec: spec, mode: mode}
	for i := range spec.From {
		if spec.From[i] == spec.To[i] {
			return nil, fmt.Errorf("perf %s: flow %d goes from %s to itself", spec.Name, i, spec.From[i])
		}
		for _, n := range []string{spec.From[i], spec.To[i]} {
			if _, err := l.nic(n); err != nil {
				return nil, fmt.Errorf("perf %s: %w", spec.Name, err)
			}
		}
		j.flows = append(j.flows, &Flow{j: j, From: spec.From[i], To: spec.To[i]})
	}
	j.left = len(j.flows)
	l.addJob(j)
	l.At(spec.Start, j.begin)
	return j, nil
}

func (j *PerfJob) begin() {
	j.started = true
	j.start = j.l.Now()
	if j.spec.Duration > 0 {
		j.deadline = j.start.Add(j.spec.Duration)
		j.l.At(j.deadline, j.atDeadline)
	}
	for _, f := range j.flows {
		f.start = j.start
		a, b := j.l.nics[f.From], j.l.nics[f.To]
		for range j.spec.QPs {
			ca := qpEnd{a, a.newQPN()}
			sb := qpEnd{b, b.newQPN()}
			q, err := j.l.newQP(ca, sb, j.mode, j.spec.Paths)
			if err != nil {
				// A flow with no path fails the job; it never finishes.
				j.err = fmt.Errorf("perf %s: %s → %s: %w", j.spec.Name, f.From, f.To, err)
				return
			}
			f.qps = append(f.qps, &perfQP{f: f, q: q, wire: wire.MessageOnWire(j.spec.Size, a.mtu, wire.RETHLen)})
		}
		f.left = len(f.qps)
	}
	depth := j.spec.TxDepth
	if j.spec.Duration <= 0 {
		depth = min(depth, j.spec.Iterations)
	}
	for _, f := range j.flows {
		for _, q := range f.qps {
			for range depth {
				q.post()
			}
		}
	}
}

func (q *perfQP) more() bool {
	j := q.f.j
	if j.spec.Duration > 0 {
		return j.l.Now() < j.deadline
	}
	return q.posted < j.spec.Iterations
}

func (q *perfQP) post() {
	q.posted++
	q.posts = append(q.posts, q.f.j.l.Now())
	q.q.Post(q.wire, nil, q.completed)
}

func (q *perfQP) completed() {
	f := q.f
	now := f.j.l.Now()
	f.fcts.Add(now.Sub(q.posts[0]))
	q.posts = q.posts[1:]
	q.done++
	f.msgs++
	f.bytes += int64(f.j.spec.Size)
	f.end = now
	if q.more() {
		q.post()
		return
	}
	if q.done == q.posted && !q.ended {
		q.ended = true
		f.left--
		if f.left == 0 && !f.finished {
			f.finished = true
			f.j.left--
			if f.j.left == 0 {
				f.j.l.finished()
			}
		}
	}
}

// atDeadline records the payload each flow delivered within the window:
// its QPs' wire bytes sent, less what is still on its way, in payload.
func (j *PerfJob) atDeadline() {
	for _, f := range j.flows {
		var payload float64
		for _, q := range f.qps {
			payload += q.q.Sent() * float64(j.spec.Size) / float64(q.wire)
		}
		f.rxAtEnd = int64(payload)
	}
}

// Name returns the job's name.
func (j *PerfJob) Name() string { return j.spec.Name }

// Err returns why the job could not run (a flow with no path), if so.
func (j *PerfJob) Err() error { return j.err }

// Done reports whether every flow finished.
func (j *PerfJob) Done() bool { return j.left == 0 }

// Flows returns the job's flows.
func (j *PerfJob) Flows() []*Flow { return j.flows }

// Messages returns the fewest messages a flow completed.
func (j *PerfJob) Messages() int64 {
	least := int64(-1)
	for _, f := range j.flows {
		if least < 0 || f.msgs < least {
			least = f.msgs
		}
	}
	return least
}

// Dist returns the flow's message completion times.
func (f *Flow) Dist() *fct.Dist { return &f.fcts }

// Done reports whether the flow finished.
func (f *Flow) Done() bool { return f.finished }

// Result returns what the flow measured, as simlab's Flow.Result.
func (f *Flow) Result() FlowResult {
	r := FlowResult{From: f.From, To: f.To, Messages: f.msgs, Bytes: f.bytes, Start: f.start, End: f.end, FCT: f.fcts.Stats()}
	switch d := f.j.spec.Duration; {
	case d > 0 && f.j.deadline != 0 && f.j.l.Now() >= f.j.deadline:
		r.GoodputGbps = float64(f.rxAtEnd) * 8 / d.Seconds() / 1e9
	case f.end > f.start:
		r.GoodputGbps = float64(f.bytes) * 8 / f.end.Sub(f.start).Seconds() / 1e9
	}
	return r
}
