package simlab

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/fct"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/perftest"
)

// PerfSpec is a perftest-style job: streams of RDMA operations between
// NICs, one flow per (From, To) pair.
type PerfSpec struct {
	// Name labels the job's samples (default "perfN", N its index).
	Name string
	// Op is "write", "read" or "send" (default "write"). For "read" the
	// data flows from To to From, as with ib_read_bw.
	Op string
	// From and To are NIC names ("host1:gpu0"). Every From sends to every
	// To (pairs of a NIC with itself are skipped), unless Pairwise.
	From, To []string
	// Pairwise makes flow i go From[i] → To[i] (equal lengths).
	Pairwise bool
	// Size is the message size in bytes (default 65536).
	Size int
	// Iterations is the number of messages of each QP (default 1000 when
	// Duration is 0).
	Iterations int
	// Duration, if > 0, posts messages until Start+Duration instead of a
	// fixed number; goodput is then measured over that window.
	Duration clock.Duration
	// QPs per flow (default 1).
	QPs int
	// TxDepth is the messages each QP keeps posted (default 32).
	TxDepth int
	// Mode ("rocev2", "metaroce") and CC override the lab's defaults.
	Mode, CC string
	// Paths is the number of paths a MetaRoCE QP sprays over (default 1).
	Paths int
	// Start is the fabric time the job starts at (a time already passed
	// means now).
	Start clock.Time
}

// PerfJob is a running Perf job.
type PerfJob struct {
	l        *Lab
	spec     PerfSpec
	write    endpoint.WROpcode
	flows    []*Flow
	left     int // flows not finished
	err      error
	started  bool
	start    clock.Time
	deadline clock.Time
	witness  *Flow // a flow that could not finish in the last window asked (mayFinish)
}

// Flow is one (From, To) stream of a Perf job.
type Flow struct {
	j        *PerfJob
	e        *sim.Engine // the engine of From's NIC, where the flow's completions run
	From, To string
	qps      []*perfQP
	left     int // QPs not finished
	start    clock.Time
	end      clock.Time
	msgs     int64
	bytes    int64
	fcts     fct.Dist
	rxAtEnd  int64 // data bytes received by the deadline (Duration mode)
	finished bool
}

type perfQP struct {
	f             *Flow
	perftest.Conn // client (From) and server (To)
	posted        int
	done          int
	posts         []clock.Time // post times of outstanding messages, in order
	finished      bool
}

// FlowResult is what one flow measured.
type FlowResult struct {
	From, To string
	// Messages and Bytes completed.
	Messages int64
	Bytes    int64
	// Start is when the flow posted its first message, End when its last
	// one completed.
	Start, End clock.Time
	// GoodputGbps is payload bits per second / 1e9: Bytes over End-Start,
	// or, for a Duration job, the payload delivered within the window
	// over the window.
	GoodputGbps float64
	// FCT is the distribution of message completion times (post to
	// completion, so time waiting behind the QP's earlier messages
	// counts, as in perftest).
	FCT fct.Stats
}

// Perf adds a Perf job; it starts at spec.Start.
func (l *Lab) Perf(spec PerfSpec) (*PerfJob, error) {
	if spec.Name == "" {
		spec.Name = "perf" + strconv.Itoa(len(l.jobs))
	}
	perftest.Defaults(&spec.Op, &spec.Size, &spec.Iterations, spec.Duration > 0)
	if spec.QPs <= 0 {
		spec.QPs = 1
	}
	if spec.TxDepth <= 0 {
		spec.TxDepth = 32
	}
	l.defaultModeCC(&spec.Mode, &spec.CC)
	j := &PerfJob{l: l, spec: spec}
	op, err := perftest.ParseOp(spec.Op)
	if err != nil {
		return nil, fmt.Errorf("perf %s: unknown operation %q (write, read, send)", spec.Name, spec.Op)
	}
	j.write = op.Opcode(false)
	if _, err := endpoint.ParseMode(spec.Mode); err != nil {
		return nil, fmt.Errorf("perf %s: %w", spec.Name, err)
	}
	if _, err := l.reg.Get(spec.CC); err != nil {
		return nil, fmt.Errorf("perf %s: %w", spec.Name, err)
	}
	pairs, err := l.pairs(spec)
	if err != nil {
		return nil, fmt.Errorf("perf %s: %w", spec.Name, err)
	}
	for _, p := range pairs {
		j.flows = append(j.flows, &Flow{j: j, e: l.nicEng[p[0]], From: p[0], To: p[1]})
	}
	j.left = len(j.flows)
	l.addJob(j)
	l.at(spec.Start, j.begin)
	return j, nil
}

// pairs returns the (from, to) NIC names of spec's flows.
func (l *Lab) pairs(spec PerfSpec) ([][2]string, error) {
	for _, n := range append(slices.Clone(spec.From), spec.To...) {
		if _, err := l.nic(n); err != nil {
			return nil, err
		}
	}
	var out [][2]string
	if spec.Pairwise {
		if len(spec.From) != len(spec.To) {
			return nil, fmt.Errorf("pairwise with %d senders and %d receivers", len(spec.From), len(spec.To))
		}
		for i := range spec.From {
			if spec.From[i] == spec.To[i] {
				return nil, fmt.Errorf("flow %d goes from %s to itself", i, spec.From[i])
			}
			out = append(out, [2]string{spec.From[i], spec.To[i]})
		}
	} else {
		for _, f := range spec.From {
			for _, t := range spec.To {
				if f != t {
					out = append(out, [2]string{f, t})
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no flows (From and To name the NICs)")
	}
	return out, nil
}

// begin builds the QPs of every flow and posts the first messages.
func (j *PerfJob) begin() {
	j.started = true
	j.start = j.l.now()
	if j.spec.Duration > 0 {
		j.deadline = j.start.Add(j.spec.Duration)
		j.l.at(j.deadline, j.atDeadline)
	}
	for _, f := range j.flows {
		if err := f.setup(); err != nil {
			j.fail(err)
			return
		}
	}
	for _, f := range j.flows {
		f.start = j.start
		for _, q := range f.qps {
			if j.write == endpoint.WRSend {
				for range j.spec.TxDepth + 1 {
					q.recv()
				}
			}
			for range j.depth() {
				q.post()
			}
		}
	}
}

// depth returns how many messages a QP posts at first.
func (j *PerfJob) depth() int {
	if j.spec.Duration > 0 {
		return j.spec.TxDepth
	}
	return min(j.spec.TxDepth, j.spec.Iterations)
}

func (f *Flow) setup() error {
	l, spec := f.j.l, f.j.spec
	cn, sn := l.byNIC[f.From], l.byNIC[f.To]
	mode, _ := endpoint.ParseMode(spec.Mode)
	cpd, spd := cn.AllocPD(), sn.AllocPD()
	cfg := endpoint.QPConfig{Mode: mode, CC: spec.CC, Paths: spec.Paths, Window: l.opts.QPWindow, Timeout: l.opts.QPTimeout}
	for range spec.QPs {
		q := &perfQP{f: f}
		var err error
		if q.Conn, err = perftest.Connect(cn, sn, cpd, spd, cfg, spec.Size, l.opts.Raw); err != nil {
			return fmt.Errorf("flow %s → %s: %w", f.From, f.To, err)
		}
		q.CCQ.OnCompletion(q.clientWC)
		q.SCQ.OnCompletion(q.serverWC)
		f.qps = append(f.qps, q)
	}
	f.left = len(f.qps)
	return nil
}

func (q *perfQP) recv() {
	size := q.f.j.spec.Size
	if err := q.S.PostRecv(endpoint.RecvWR{Local: endpoint.SGE{Addr: q.SMR.Addr, Length: uint32(size), LKey: q.SMR.LKey}}); err != nil {
		q.f.j.fail(err)
	}
}

// more reports whether the QP should post another message.
func (q *perfQP) more() bool {
	j := q.f.j
	j.l.lock()
	failed := j.err != nil
	j.l.unlock()
	if failed {
		return false
	}
	if j.spec.Duration > 0 {
		return q.f.e.Now() < j.deadline
	}
	return q.posted < j.spec.Iterations
}

func (q *perfQP) post() {
	j := q.f.j
	q.posted++
	q.posts = append(q.posts, q.f.e.Now())
	wr := endpoint.SendWR{WRID: uint64(q.posted), Opcode: j.write, Signaled: true,
		Local:      endpoint.SGE{Addr: q.CMR.Addr, Length: uint32(j.spec.Size), LKey: q.CMR.LKey},
		RemoteAddr: q.SMR.Addr, RKey: q.SMR.RKey}
	if err := q.C.PostSend(wr); err != nil {
		j.fail(err)
	}
}

func (q *perfQP) clientWC(wc endpoint.WC) {
	f, j := q.f, q.f.j
	if wc.Status != endpoint.StatusSuccess {
		j.fail(fmt.Errorf("flow %s → %s: completion %v: %v", f.From, f.To, wc.Status, wc.Err))
		return
	}
	now := f.e.Now()
	if len(q.posts) > 0 {
		f.fcts.Add(now.Sub(q.posts[0]))
		q.posts[0] = 0
		q.posts = q.posts[1:]
	}
	q.done++
	f.msgs++
	f.bytes += int64(j.spec.Size)
	f.end = now
	if q.more() {
		q.post()
		return
	}
	if q.done == q.posted && !q.finished {
		q.finished = true
		f.qpDone()
	}
}

func (q *perfQP) serverWC(wc endpoint.WC) {
	if wc.Status != endpoint.StatusSuccess {
		q.f.j.fail(fmt.Errorf("flow %s → %s: server completion %v: %v", q.f.From, q.f.To, wc.Status, wc.Err))
		return
	}
	if wc.Opcode == endpoint.WCRecv {
		q.recv()
	}
}

func (f *Flow) qpDone() {
	l := f.j.l
	l.lock()
	f.left--
	done := f.left == 0 && !f.finished
	if done {
		f.finished = true
		f.j.left--
		done = f.j.left == 0
	}
	l.unlock()
	if done {
		l.finished()
	}
}

// atDeadline records how much data each flow delivered within the window.
func (j *PerfJob) atDeadline() {
	for _, f := range j.flows {
		f.rxAtEnd = f.RxBytes()
	}
}

func (j *PerfJob) fail(err error) {
	j.l.lock()
	if j.err != nil || j.left == 0 { // a failure already counted, or finished
		if j.err == nil {
			j.err = fmt.Errorf("perf %s: %w", j.spec.Name, err)
		}
		j.l.unlock()
		return
	}
	j.err = fmt.Errorf("perf %s: %w", j.spec.Name, err)
	for _, f := range j.flows {
		if !f.finished {
			f.finished = true
			j.left--
		}
	}
	j.l.unlock()
	j.l.finished()
}

// Name returns the job's name.
func (j *PerfJob) Name() string { return j.spec.Name }

// Spec returns the job's specification, defaults filled in.
func (j *PerfJob) Spec() PerfSpec { return j.spec }

// Done reports whether every flow finished (or the job failed).
func (j *PerfJob) Done() bool { return j.left == 0 }

// Err returns the first error the job met.
func (j *PerfJob) Err() error { return j.err }

// Flows returns the job's flows.
func (j *PerfJob) Flows() []*Flow { return j.flows }

// RxBytes returns the payload bytes the data receiver of the flow has
// taken so far (To for WRITE and SEND, From for READ), over all its QPs.
func (f *Flow) RxBytes() int64 {
	var n int64
	for _, q := range f.qps {
		rx := q.S
		if f.j.write == endpoint.WRRead {
			rx = q.C
		}
		n += rx.Stats().RxDataBytes
	}
	return n
}

// lineRate is the line rate of the NIC that receives the flow's data.
func (f *Flow) lineRate() clock.Rate {
	if len(f.qps) == 0 {
		return 0
	}
	if f.j.write == endpoint.WRRead {
		return f.qps[0].C.LineRate()
	}
	return f.qps[0].S.LineRate()
}

// Name returns "from->to".
func (f *Flow) Name() string { return f.From + "->" + f.To }

// Done reports whether the flow finished.
func (f *Flow) Done() bool { return f.finished }

// FCTs returns the message completion times of the flow, in completion
// order: all of them up to the first 4096, then only those (memory does
// not grow with the run). Result().FCT summarises all of them.
func (f *Flow) FCTs() []clock.Duration { return f.fcts.First() }

// Dist returns the flow's streaming distribution of message completion
// times (every message, bounded memory); the caller must not modify it.
func (f *Flow) Dist() *fct.Dist { return &f.fcts }

// Result returns what the flow measured so far.
func (f *Flow) Result() FlowResult {
	r := FlowResult{From: f.From, To: f.To, Messages: f.msgs, Bytes: f.bytes, Start: f.start, End: f.end,
		FCT: f.fcts.Stats()}
	switch d := f.j.spec.Duration; {
	case d > 0 && f.j.deadline != 0 && f.j.l.now() >= f.j.deadline:
		r.GoodputGbps = float64(f.rxAtEnd) * 8 / d.Seconds() / 1e9
	case f.end > f.start:
		r.GoodputGbps = float64(f.bytes) * 8 / f.end.Sub(f.start).Seconds() / 1e9
	}
	return r
}

// Results returns every flow's result, in flow order.
func (j *PerfJob) Results() []FlowResult {
	out := make([]FlowResult, len(j.flows))
	for i, f := range j.flows {
		out[i] = f.Result()
	}
	return out
}

// TotalGbps returns the sum of the flows' goodputs.
func (j *PerfJob) TotalGbps() float64 {
	var t float64
	for _, r := range j.Results() {
		t += r.GoodputGbps
	}
	return t
}

// Collect emits per-flow samples labelled job, from and to.
func (j *PerfJob) Collect(emit func(telemetry.Sample)) {
	for _, f := range j.flows {
		r := f.Result()
		l := []telemetry.Label{{Name: "job", Value: j.spec.Name}, {Name: "from", Value: f.From}, {Name: "to", Value: f.To}}
		emit(telemetry.Sample{Name: "perf_flow_messages_total", Kind: telemetry.Counter, Labels: l, Value: float64(r.Messages)})
		emit(telemetry.Sample{Name: "perf_flow_bytes_total", Kind: telemetry.Counter, Labels: l, Value: float64(r.Bytes)})
		emit(telemetry.Sample{Name: "perf_flow_rx_bytes_total", Kind: telemetry.Counter, Labels: l, Value: float64(f.RxBytes())})
		emit(telemetry.Sample{Name: "perf_flow_goodput_bytes_per_second", Kind: telemetry.Gauge, Labels: l, Value: r.GoodputGbps * 1e9 / 8})
		emit(telemetry.Sample{Name: "perf_flow_fct_p99_seconds", Kind: telemetry.Gauge, Labels: l, Value: r.FCT.P99.Seconds()})
	}
}
