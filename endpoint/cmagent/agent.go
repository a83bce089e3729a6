// Package cmagent is the compliance adapter's Communication Manager
// consumer: what the CM cases of lab/compliance drive on the IUT, shared by
// the in-process IUT (lab/compliance/inproc) and the endpoint node's
// adapter routes (docs/compliance.md, "The CM operations"). It listens on
// rdma_cm ports and accepts every request (an RC request with a new RC
// QP's QPN and PSN, a SIDR request with a UD QP of the listener's Q_Key),
// connects to a peer's port with a new RC QP and confirms its REP at once
// (RTU), and records every event its NIC's Communication Manager reports.
//
// Like the manager it owns no goroutine: its methods and the manager's
// events run on the NIC's scheduler goroutine.
package cmagent

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/connmgr"
	"github.com/rocelab/rocelab/wire/cm"
)

// Spec configures the IUT's Communication Manager: how long a message
// waits for its answer before it is sent again, and how many times.
type Spec struct {
	Timeout clock.Duration `json:"timeout_ps"`
	Retries int            `json:"retries"`
}

// Listen is the adapter's CM listen operation: the IUT listens on rdma_cm
// port Port in both port spaces (RDMA_PS_TCP: REQ; RDMA_PS_UDP: SIDR_REQ),
// and a SIDR request is answered with a UD QP of Q_Key QKey.
type Listen struct {
	Spec
	Port uint16 `json:"port"`
	QKey uint32 `json:"qkey"`
}

// Connect is the adapter's CM connect operation: the IUT creates an RC QP
// and sends a REQ for rdma_cm port Port (RDMA_PS_TCP) to the port at To.
type Connect struct {
	Spec
	To   netip.Addr `json:"to"`
	Port uint16     `json:"port"`
}

// Connected answers Connect: the IUT's communication ID (the REQ's
// LocalCommID) and its QP's number.
type Connected struct {
	ID  uint32 `json:"id"`
	QPN uint32 `json:"qpn"`
}

// Event is one event the consumer heard (connmgr.EventKind's names:
// connect-request, replied, established, rejected, unreachable,
// disconnected).
type Event struct {
	Kind string     `json:"kind"`
	ID   uint32     `json:"id"` // the IUT's communication ID
	Peer netip.Addr `json:"peer"`
	// QPN is the IUT's QP for the connection (the consumer's), RemoteQPN
	// the peer's as its REQ, REP or SIDR_REP said.
	QPN       uint32 `json:"qpn,omitempty"`
	RemoteQPN uint32 `json:"remote_qpn,omitempty"`
	Reason    uint16 `json:"reason,omitempty"`
	UD        bool   `json:"ud,omitempty"`
}

// ErrBusy is New's error for a NIC whose Communication Manager already
// serves another consumer (rdma_cm programs).
var ErrBusy = errors.New("the NIC's Communication Manager serves another consumer")

// ErrSpec is the error for an operation whose Spec differs from the one
// the agent's manager was started with (a NIC has one manager).
var ErrSpec = errors.New("CM timeout and retries differ from the running manager's")

// Agent is the consumer on one NIC.
type Agent struct {
	nic    *endpoint.NIC
	pd     *endpoint.PD
	cq     *endpoint.CQ
	spec   Spec
	m      *connmgr.Manager
	qps    map[uint32]*endpoint.QP // by communication ID
	listen []uint64
	qkey   map[uint64]uint32 // a UD service's Q_Key
	events []Event
}

// New starts the NIC's Communication Manager with spec and returns its
// consumer.
func New(nic *endpoint.NIC, spec Spec) (*Agent, error) {
	if nic.CM() != nil {
		return nil, ErrBusy
	}
	if spec.Timeout <= 0 || spec.Retries <= 0 {
		return nil, fmt.Errorf("cm agent: timeout %v, retries %d: want both positive", spec.Timeout, spec.Retries)
	}
	a := &Agent{nic: nic, pd: nic.AllocPD(), cq: nic.CreateCQ(0), spec: spec, qps: map[uint32]*endpoint.QP{}, qkey: map[uint64]uint32{}}
	a.m = nic.StartCM(connmgr.Config{Timeout: spec.Timeout, Retries: spec.Retries, Event: a.event})
	return a, nil
}

// Spec is the spec the agent's manager runs with.
func (a *Agent) Spec() Spec { return a.spec }

func (a *Agent) check(s Spec) error {
	if s != a.spec {
		return fmt.Errorf("cm agent: %w (asked %v × %d, running %v × %d)", ErrSpec, s.Timeout, s.Retries, a.spec.Timeout, a.spec.Retries)
	}
	return nil
}

// Listen listens on l.Port in both port spaces.
func (a *Agent) Listen(l Listen) error {
	if err := a.check(l.Spec); err != nil {
		return err
	}
	tcp, udp := cm.ServiceID(cm.PortSpaceTCP, l.Port), cm.ServiceID(cm.PortSpaceUDP, l.Port)
	for _, svc := range []uint64{tcp, udp} {
		if err := a.m.Listen(svc); err != nil {
			return fmt.Errorf("cm agent: listen on port %d: %w", l.Port, err)
		}
		a.listen = append(a.listen, svc)
	}
	a.qkey[udp] = l.QKey
	return nil
}

// Connect creates an RC QP and sends a REQ for c.Port to c.To.
func (a *Agent) Connect(c Connect) (Connected, error) {
	if err := a.check(c.Spec); err != nil {
		return Connected{}, err
	}
	qp, err := a.qp(endpoint.TypeRC, 0)
	if err != nil {
		return Connected{}, err
	}
	info := qp.Info()
	priv := cm.AppendIPPrivate(nil, cm.IPPrivate{SrcPort: c.Port, Src: a.nic.IP(), Dst: c.To}, nil)
	id := a.m.Connect(c.To, connmgr.Params{ServiceID: cm.ServiceID(cm.PortSpaceTCP, c.Port), QPN: info.QPN, PSN: info.PSN,
		ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7, PathMTU: 5, Private: priv})
	a.qps[id] = qp
	return Connected{ID: id, QPN: info.QPN}, nil
}

// Events returns the events heard since the last call.
func (a *Agent) Events() []Event {
	out := a.events
	a.events = nil
	if out == nil {
		out = []Event{}
	}
	return out
}

// Reset stops listening, ends every connection quietly (connmgr's Close)
// and forgets the events: the next case starts clean on a node that
// serves many.
func (a *Agent) Reset() {
	for _, svc := range a.listen {
		a.m.Unlisten(svc)
	}
	a.listen, a.events = nil, nil
	clear(a.qkey)
	ids := make([]uint32, 0, len(a.qps))
	for id := range a.qps {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		a.m.Close(id)
		a.drop(id)
	}
}

func (a *Agent) qp(typ endpoint.QPType, qkey uint32) (*endpoint.QP, error) {
	qp, err := a.pd.CreateQP(endpoint.QPConfig{SendCQ: a.cq, RecvCQ: a.cq, Mode: endpoint.ModeRoCEv2, Type: typ, QKey: qkey})
	if err != nil {
		return nil, fmt.Errorf("cm agent: create QP: %w", err)
	}
	return qp, nil
}

func (a *Agent) drop(id uint32) {
	if qp := a.qps[id]; qp != nil {
		qp.Destroy()
		delete(a.qps, id)
	}
}

// event takes the manager's events: it accepts requests, confirms
// replies and records everything.
func (a *Agent) event(e connmgr.Event) {
	ev := Event{Kind: e.Kind.String(), ID: e.ID, Peer: e.Peer, RemoteQPN: e.Remote.QPN, Reason: e.Reason, UD: e.UD}
	switch e.Kind {
	case connmgr.ConnectRequest:
		ev.QPN = a.accept(e)
	case connmgr.Replied:
		if err := a.m.Confirm(e.ID); err != nil {
			ev.Kind += " (confirm: " + err.Error() + ")"
		}
	case connmgr.Rejected, connmgr.Unreachable, connmgr.Disconnected:
		defer a.drop(e.ID)
	}
	if qp := a.qps[e.ID]; qp != nil && ev.QPN == 0 {
		ev.QPN = qp.QPN()
	}
	a.events = append(a.events, ev)
}

// accept answers a request with a new QP and returns its number (0: the
// QP could not be made and the request is rejected).
func (a *Agent) accept(e connmgr.Event) uint32 {
	typ, qkey := endpoint.TypeRC, uint32(0)
	if e.UD {
		typ, qkey = endpoint.TypeUD, a.qkey[e.Remote.ServiceID]
	}
	qp, err := a.qp(typ, qkey)
	if err != nil {
		a.m.Reject(e.ID, nil)
		return 0
	}
	a.qps[e.ID] = qp
	info := qp.Info()
	p := connmgr.Params{QPN: info.QPN, PSN: info.PSN, QKey: qkey, ResponderResources: e.Remote.InitiatorDepth,
		InitiatorDepth: e.Remote.ResponderResources, RNRRetryCount: 7}
	if err := a.m.Accept(e.ID, p); err != nil {
		a.drop(e.ID)
		return 0
	}
	return info.QPN
}
