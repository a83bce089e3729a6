// Package inproc runs the compliance suite against the reference endpoint
// in one process: the IUT is an endpoint.NIC in raw mode (real frames, ICRC
// included) on core/sim's virtual clock, the wire a direct hand-over, the
// adapter direct calls. Runs are fast and deterministic; Options.Mutant
// selects a mutant of the reference for the mutation test.
package inproc

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/adapter"
	"github.com/rocelab/rocelab/endpoint/cmagent"
	"github.com/rocelab/rocelab/lab/compliance"
	"github.com/rocelab/rocelab/wire"
)

// Options configure the in-process IUT.
type Options struct {
	Seed uint64
	// Mutant breaks one requirement of the reference (tests only).
	Mutant endpoint.Mutant
}

// Addresses of the IUT and the tester.
var (
	IUTIP     = netip.MustParseAddr("10.99.0.1")
	TesterIP  = netip.MustParseAddr("10.99.0.2")
	IUTMAC    = [6]byte{0x02, 0x52, 0x4c, 0, 0, 1}
	TesterMAC = [6]byte{0x02, 0x52, 0x4c, 0, 0, 2}
)

// NewEnv returns the factory of fresh in-process Envs.
func NewEnv(o Options) compliance.NewEnv {
	return func(context.Context) (compliance.Env, error) { return newEnv(o) }
}

// qpState is an adapter QP and its completion queue.
type qpState struct {
	ad adapter.QP
	cq *endpoint.CQ
}

type env struct {
	eng *sim.Engine
	nic *endpoint.NIC
	pd  *endpoint.PD
	qps map[int]*qpState
	n   int
	rx  []compliance.Frame
	cm  *cmagent.Agent // made by the first CM operation
}

type sinkFunc func(*wire.Packet)

func (f sinkFunc) Receive(p *wire.Packet) { f(p) }

func newEnv(o Options) (*env, error) {
	e := &env{eng: sim.New(o.Seed), qps: map[int]*qpState{}}
	nic, err := endpoint.NewNIC(endpoint.Options{Name: "iut", Sched: e.eng, Rand: e.eng.Rand("iut"), MAC: IUTMAC, IP: IUTIP, Raw: true, Mutant: o.Mutant})
	if err != nil {
		return nil, fmt.Errorf("in-process IUT: %w", err)
	}
	nic.Attach(sinkFunc(func(p *wire.Packet) {
		e.rx = append(e.rx, compliance.Frame{At: e.eng.Now(), Data: append([]byte(nil), p.Raw...)})
	}))
	e.nic, e.pd = nic, nic.AllocPD()
	return e, nil
}

func (e *env) Send(frame []byte) error {
	p := &wire.Packet{}
	if err := p.Decode(append([]byte(nil), frame...)); err != nil {
		return fmt.Errorf("in-process wire: %w", err)
	}
	e.nic.Receive(p) // at Now, before any adapter call that follows
	return nil
}

func (e *env) Next(deadline clock.Time) (compliance.Frame, bool, error) {
	if len(e.rx) == 0 && e.eng.Now() < deadline {
		hit := false
		tm := e.eng.At(deadline, func() { hit = true })
		for len(e.rx) == 0 && !hit && e.eng.Step() {
		}
		tm.Stop()
	}
	if len(e.rx) == 0 {
		return compliance.Frame{}, false, nil
	}
	f := e.rx[0]
	e.rx = e.rx[1:]
	return f, true, nil
}

func (e *env) Now() clock.Time             { return e.eng.Now() }
func (e *env) Jitter() clock.Duration      { return 0 } // the virtual clock is exact
func (e *env) Peer() (netip.Addr, [6]byte) { return TesterIP, TesterMAC }
func (e *env) Close() error                { return nil }

func (e *env) qp(id int) (*qpState, error) {
	q := e.qps[id]
	if q == nil {
		return nil, fmt.Errorf("no qp %d", id)
	}
	return q, nil
}

func (e *env) CreateQP(s compliance.QPSpec) (compliance.QPHandle, error) {
	mode := s.Mode
	typ, err := adapter.QPType(s.Type)
	if err != nil {
		return compliance.QPHandle{}, err
	}
	cq := e.nic.CreateCQ(0)
	cfg := endpoint.QPConfig{SendCQ: cq, RecvCQ: cq, Mode: mode, Paths: s.Paths, Type: typ, QKey: s.QKey}
	if s.PSN != nil {
		cfg.PSN, cfg.HasPSN = *s.PSN, true
	}
	qp, err := e.pd.CreateQP(cfg)
	if err != nil {
		return compliance.QPHandle{}, err
	}
	buf := make([]byte, s.Buffer)
	mr, err := e.pd.RegMR(buf, adapter.AccessFor(s.NoRemoteAtomic))
	if err != nil {
		qp.Destroy()
		return compliance.QPHandle{}, err
	}
	e.n++
	e.qps[e.n] = &qpState{ad: adapter.QP{QP: qp, MR: mr, Buf: buf}, cq: cq}
	return compliance.QPHandle{ID: e.n, Conn: qp.Info(), Buf: compliance.Buffer{Addr: mr.Addr, RKey: mr.RKey, Len: int64(len(buf))}}, nil
}

func (e *env) Connect(id int, remote endpoint.ConnInfo) error {
	q, err := e.qp(id)
	if err != nil {
		return err
	}
	q.ad.Peer = remote.IP
	return q.ad.QP.Connect(remote)
}

func (e *env) PostSend(id int, wr compliance.WR) error {
	q, err := e.qp(id)
	if err != nil {
		return err
	}
	return q.ad.PostSend(wr)
}

func (e *env) PostRecv(id int, wrid, off uint64, n uint32) error {
	q, err := e.qp(id)
	if err != nil {
		return err
	}
	return q.ad.PostRecv(adapter.Recv{WRID: wrid, Offset: off, Len: n})
}

func (e *env) Poll(id int) ([]compliance.Completion, error) {
	q, err := e.qp(id)
	if err != nil {
		return nil, err
	}
	var out []compliance.Completion
	for _, wc := range q.cq.Poll(0) {
		out = append(out, adapter.CompletionOf(wc))
	}
	return out, nil
}

func (e *env) Query(id int) (compliance.QPStatus, error) {
	q, err := e.qp(id)
	if err != nil {
		return compliance.QPStatus{}, err
	}
	return compliance.QPStatus{State: q.ad.QP.State().String(), Mode: q.ad.QP.Mode()}, nil
}

func (e *env) ReadMem(id int, off uint64, n int) ([]byte, error) {
	q, err := e.qp(id)
	if err != nil {
		return nil, err
	}
	return q.ad.Read(off, uint64(n))
}

func (e *env) WriteMem(id int, off uint64, data []byte) error {
	q, err := e.qp(id)
	if err != nil {
		return err
	}
	return q.ad.Write(off, data)
}

func (e *env) Destroy(id int) error {
	q, err := e.qp(id)
	if err != nil {
		return err
	}
	q.ad.QP.Destroy()
	delete(e.qps, id)
	return nil
}

// agent returns the IUT's CM consumer, made with spec on first use.
func (e *env) agent(spec compliance.CMSpec) (*cmagent.Agent, error) {
	if e.cm == nil {
		a, err := cmagent.New(e.nic, spec)
		if err != nil {
			return nil, fmt.Errorf("in-process IUT: %w", err)
		}
		e.cm = a
	}
	return e.cm, nil
}

func (e *env) CMListen(l compliance.CMListen) error {
	a, err := e.agent(l.Spec)
	if err != nil {
		return err
	}
	return a.Listen(l)
}

func (e *env) CMConnect(c compliance.CMConnect) (compliance.CMConnected, error) {
	a, err := e.agent(c.Spec)
	if err != nil {
		return compliance.CMConnected{}, err
	}
	return a.Connect(c)
}

func (e *env) CMEvents() ([]compliance.CMEvent, error) {
	if e.cm == nil {
		return []compliance.CMEvent{}, nil
	}
	return e.cm.Events(), nil
}
