// Package perftest is an event-driven model of the perftest tools
// (ib_write_bw, ib_read_bw, ib_send_bw and their _lat siblings) over
// endpoint NICs: it sets up QP pairs between a client and a server NIC,
// drives the operations from completions, and reports bandwidth, message
// rate and latency in real units. It runs on whatever clock.Scheduler
// drives the NICs (the simulator or the wall-clock loop).
package perftest

import (
	"fmt"
	"slices"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
)

// Op is the operation under test.
type Op uint8

// Operations.
const (
	Write Op = iota
	Read
	Send
)

func (o Op) String() string { return [...]string{"write", "read", "send"}[o] }

// ParseOp parses "write", "read" or "send".
func ParseOp(s string) (Op, error) {
	for o := Write; o <= Send; o++ {
		if o.String() == s {
			return o, nil
		}
	}
	return 0, fmt.Errorf("unknown perftest operation %q (write, read, send)", s)
}

// Opcode is the WR opcode a test of o posts. A latency test's WRITE
// carries immediate data: the peer learns of it from its completion.
func (o Op) Opcode(latency bool) endpoint.WROpcode {
	switch {
	case o == Read:
		return endpoint.WRRead
	case o == Send:
		return endpoint.WRSend
	case latency:
		return endpoint.WRWriteImm
	}
	return endpoint.WRWrite
}

// The defaults of a test, shared by every driver and front end that runs
// one (the endpoint node's perf job, the simulator's, scenario files and
// the CLI).
const (
	DefaultSize       = 65536
	DefaultIterations = 1000
	DefaultTxDepth    = 128
)

// Defaults fills in what a request to run a test left out: the operation
// (write), the message size (DefaultSize) and, unless it runs for a
// time, the messages per QP (DefaultIterations).
func Defaults(op *string, size, iterations *int, timed bool) {
	if *op == "" {
		*op = Write.String()
	}
	if *size <= 0 {
		*size = DefaultSize
	}
	if *iterations <= 0 && !timed {
		*iterations = DefaultIterations
	}
}

// Config is one test.
type Config struct {
	Op Op
	// Latency runs the _lat test (one message in flight, ping-pong for
	// WRITE and SEND) instead of the _bw test.
	Latency bool
	// Size is the message size in bytes (default 65536).
	Size int
	// Iterations per QP (default 1000).
	Iterations int
	// QPs is the number of QP pairs (default 1).
	QPs int
	// TxDepth is the WRs each QP keeps in flight (default 128).
	TxDepth int
	// QP configures both ends of every QP (CQs are set by the test).
	QP endpoint.QPConfig
	// Raw backs the buffers with memory (needed on a raw NIC to move
	// bytes; payload-free NICs ignore it).
	Raw bool
}

// Result is what a test measured.
type Result struct {
	Op         string
	Latency    bool
	Size       int
	Iterations int
	QPs        int
	Bytes      int64
	Duration   clock.Duration
	// BWGbps is the average goodput (payload bits per second / 1e9).
	BWGbps float64
	// MsgRate is in millions of messages per second.
	MsgRate float64
	// Latencies (the _lat tests: one-way for WRITE and SEND ping-pong,
	// round trip for READ, as perftest reports them).
	LatMin, LatMedian, LatP99, LatMax clock.Duration
	Errors                            int
}

// Test is a running test.
type Test struct {
	cfg    Config
	sched  clock.Scheduler
	pairs  []*pair
	start  clock.Time
	end    clock.Time
	left   int
	lats   []clock.Duration
	errs   int
	err    error
	onDone func(Result)
}

type pair struct {
	t *Test
	Conn
	posted, done int
	sent         clock.Time
}

// Start builds the QPs between client and server and starts the test; it
// finishes inside the scheduler's events. onDone (may be nil) is called
// with the result.
func Start(sched clock.Scheduler, client, server *endpoint.NIC, cfg Config, onDone func(Result)) (*Test, error) {
	if cfg.Size <= 0 {
		cfg.Size = DefaultSize
	}
	if cfg.Iterations <= 0 {
		cfg.Iterations = DefaultIterations
	}
	if cfg.QPs <= 0 {
		cfg.QPs = 1
	}
	if cfg.TxDepth <= 0 {
		cfg.TxDepth = DefaultTxDepth
	}
	if cfg.Latency {
		cfg.TxDepth, cfg.QPs = 1, 1
	}
	t := &Test{cfg: cfg, sched: sched, left: cfg.QPs, onDone: onDone}
	cpd, spd := client.AllocPD(), server.AllocPD()
	for range cfg.QPs {
		p := &pair{t: t}
		var err error
		if p.Conn, err = Connect(client, server, cpd, spd, cfg.QP, cfg.Size, cfg.Raw); err != nil {
			return nil, fmt.Errorf("perftest: %w", err)
		}
		p.CCQ.OnCompletion(p.clientWC)
		p.SCQ.OnCompletion(p.serverWC)
		t.pairs = append(t.pairs, p)
	}
	t.start = sched.Now()
	for _, p := range t.pairs {
		if cfg.Op == Send || cfg.Latency && cfg.Op == Write {
			for range min(cfg.TxDepth, cfg.Iterations) + 1 {
				p.recv(p.S, p.SMR)
				if cfg.Latency {
					p.recv(p.C, p.CMR)
				}
			}
		}
		for range min(cfg.TxDepth, cfg.Iterations) {
			p.post()
		}
	}
	return t, nil
}

func (p *pair) recv(qp *endpoint.QP, mr *endpoint.MR) {
	if err := qp.PostRecv(endpoint.RecvWR{Local: endpoint.SGE{Addr: mr.Addr, Length: uint32(p.t.cfg.Size), LKey: mr.LKey}}); err != nil {
		p.t.fail(err)
	}
}

// wr returns the WR the client (or, ping-pong, the server) posts.
func (p *pair) wr(from, to *endpoint.MR) endpoint.SendWR {
	cfg := p.t.cfg
	return endpoint.SendWR{Opcode: cfg.Op.Opcode(cfg.Latency), Signaled: true,
		Local: endpoint.SGE{Addr: from.Addr, Length: uint32(cfg.Size), LKey: from.LKey}, RemoteAddr: to.Addr, RKey: to.RKey}
}

func (p *pair) post() {
	p.posted++
	p.sent = p.t.sched.Now()
	if err := p.C.PostSend(p.wr(p.CMR, p.SMR)); err != nil {
		p.t.fail(err)
	}
}

func (p *pair) clientWC(wc endpoint.WC) {
	t := p.t
	if !t.succeeded(wc, "client") {
		return
	}
	lat := t.cfg.Latency
	switch {
	case lat && t.cfg.Op != Read && (wc.Opcode == endpoint.WCRecv || wc.Opcode == endpoint.WCRecvWriteImm):
		t.lats = append(t.lats, t.sched.Now().Sub(p.sent)/2) // half the round trip
		p.recv(p.C, p.CMR)
	case lat && t.cfg.Op != Read:
		return // the send side of the ping
	case lat:
		t.lats = append(t.lats, t.sched.Now().Sub(p.sent))
	}
	p.done++
	if p.done == t.cfg.Iterations {
		t.finishPair()
		return
	}
	if p.posted < t.cfg.Iterations {
		p.post()
	}
}

func (p *pair) serverWC(wc endpoint.WC) {
	t := p.t
	if !t.succeeded(wc, "server") {
		return
	}
	if wc.Opcode != endpoint.WCRecv && wc.Opcode != endpoint.WCRecvWriteImm {
		return
	}
	p.recv(p.S, p.SMR)
	if t.cfg.Latency {
		if err := p.S.PostSend(p.wr(p.SMR, p.CMR)); err != nil { // the pong
			t.fail(err)
		}
	}
}

// succeeded reports whether a completion of the side succeeded, and
// fails the test when it did not.
func (t *Test) succeeded(wc endpoint.WC, side string) bool {
	if wc.Status == endpoint.StatusSuccess {
		return true
	}
	t.errs++
	t.fail(fmt.Errorf("perftest: %s completion %v: %v", side, wc.Status, wc.Err))
	return false
}

func (t *Test) fail(err error) {
	if t.err == nil {
		t.err = err
	}
}

func (t *Test) finishPair() {
	t.left--
	if t.left == 0 {
		t.end = t.sched.Now()
		if t.onDone != nil {
			t.onDone(t.Result())
		}
	}
}

// Done reports whether every QP finished its iterations.
func (t *Test) Done() bool { return t.left == 0 }

// Err returns the first error the test met.
func (t *Test) Err() error { return t.err }

// Result returns the measurements (of a finished test).
func (t *Test) Result() Result {
	cfg := t.cfg
	r := Result{Op: cfg.Op.String(), Latency: cfg.Latency, Size: cfg.Size, Iterations: cfg.Iterations, QPs: cfg.QPs, Errors: t.errs}
	if !t.Done() {
		return r
	}
	r.Duration = t.end.Sub(t.start)
	msgs := int64(cfg.Iterations) * int64(cfg.QPs)
	r.Bytes = msgs * int64(cfg.Size)
	if s := r.Duration.Seconds(); s > 0 {
		r.BWGbps = float64(r.Bytes) * 8 / s / 1e9
		r.MsgRate = float64(msgs) / s / 1e6
	}
	if len(t.lats) > 0 {
		l := slices.Clone(t.lats)
		slices.Sort(l)
		r.LatMin, r.LatMax = l[0], l[len(l)-1]
		r.LatMedian = l[len(l)/2]
		r.LatP99 = l[min(len(l)-1, (len(l)*99+99)/100-1)]
	}
	return r
}
