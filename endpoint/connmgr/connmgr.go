package connmgr

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/wire/cm"
)

// Defaults of Config.
const (
	// DefaultTimeout is rdma_cm's CM response timeout: 4.096 µs × 2^20.
	DefaultTimeout = 4096 * clock.Nanosecond << 20
	// DefaultRetries is rdma_cm's most CM retries.
	DefaultRetries = 15
)

// Config is a port's Communication Manager.
type Config struct {
	Sched clock.Scheduler
	// Local is the port's address (its GID); GUID its CA's GUID.
	Local netip.Addr
	GUID  uint64
	// Send puts a MAD on the wire to the QP1 of the port at to.
	Send func(to netip.Addr, mad []byte)
	// Event tells the consumer what happened to a connection.
	Event func(Event)
	// Timeout is how long a message waits for its answer before it is
	// sent again, Retries how many times (defaults above).
	Timeout clock.Duration
	Retries int
	// FirstID is the first local communication ID handed out (0: 1).
	FirstID uint32
	// Defects are deliberate faults for the compliance suite's mutation
	// test (defect.go); ignored unless built with rocelab_mutants.
	Defects Defect
}

// Params are one side's part of a connection: what its REQ or REP says.
type Params struct {
	ServiceID                          uint64 // the active side's REQ only
	QPN, PSN                           uint32
	ResponderResources, InitiatorDepth uint8
	RetryCount, RNRRetryCount          uint8
	PathMTU                            uint8
	// QKey is a UD service's Q_Key (a SIDR_REP's).
	QKey    uint32
	Private []byte
}

// EventKind is what happened to a connection.
type EventKind uint8

// Events, in the order a connection meets them.
const (
	ConnectRequest EventKind = iota + 1 // passive: a REQ (or SIDR_REQ) for a listened service ID
	// Replied: active, the peer's REP came; the consumer readies its QP
	// and Confirms (RTU), as rdma_cm does before it reports the
	// connection established.
	Replied
	// Established: passive, the RTU came; active UD, the SIDR_REP
	// gave the service's QP and Q_Key.
	Established
	Rejected     // active: the peer's REJ (or a SIDR_REP that is not valid: Reason is its status)
	Unreachable  // the peer did not answer through every retry
	Disconnected // both: after a DREQ (sent or received)
)

var kindNames = [...]string{ConnectRequest: "connect-request", Replied: "replied", Established: "established", Rejected: "rejected",
	Unreachable: "unreachable", Disconnected: "disconnected"}

func (k EventKind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("event %d", uint8(k))
}

// Event is one event of connection ID.
type Event struct {
	Kind EventKind
	ID   uint32
	Peer netip.Addr
	// Remote is the peer's side as its REQ or REP said (ConnectRequest,
	// Established on the active side).
	Remote Params
	// Reason is a REJ's reason (Rejected).
	Reason uint16
	// UD marks service ID resolution (SIDR) rather than a connection.
	UD bool
}

type state uint8

const (
	reqSent state = iota + 1
	reqRcvd
	repSent
	repRcvd // active: the REP came, the consumer has not confirmed
	established
	dreqSent
	sidrSent     // active UD: SIDR_REQ sent
	sidrRcvd     // passive UD: SIDR_REQ heard, the consumer has not answered
	sidrAnswered // passive UD: answered; kept a while for a SIDR_REQ sent again
)

// conn is one connection.
type conn struct {
	id, remoteID uint32
	peer         netip.Addr
	st           state
	tid          uint64
	last         []byte // the MAD sent last, sent again on a timeout
	tries        int
	timer        clock.Timer
	remoteQPN    uint32
	serviceID    uint64 // a passive UD request's
	// quiet: the consumer closed it; its end goes unreported.
	quiet bool
}

// Manager is a port's Communication Manager.
type Manager struct {
	cfg       Config
	next      uint32
	conns     map[uint32]*conn
	byRemote  map[remoteKey]*conn // the passive side's, by the REQ's sender
	listening map[uint64]bool
}

type remoteKey struct {
	peer netip.Addr
	id   uint32
}

// ErrNoConn is returned for a connection ID the manager does not have, or
// one in the wrong state for the call.
var ErrNoConn = errors.New("no such connection")

// New returns a port's Communication Manager.
func New(cfg Config) *Manager {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Retries <= 0 {
		cfg.Retries = DefaultRetries
	}
	return &Manager{cfg: cfg, next: max(cfg.FirstID, 1), conns: map[uint32]*conn{}, byRemote: map[remoteKey]*conn{},
		listening: map[uint64]bool{}}
}

// Listen has REQs for serviceID reach the consumer (ConnectRequest).
func (m *Manager) Listen(serviceID uint64) error {
	if m.listening[serviceID] {
		return fmt.Errorf("service ID %#x: already listening", serviceID)
	}
	m.listening[serviceID] = true
	return nil
}

// Unlisten stops listening on serviceID; REQs for it are rejected.
func (m *Manager) Unlisten(serviceID uint64) { delete(m.listening, serviceID) }

// Connect sends a REQ to the port at to and returns the connection's ID.
func (m *Manager) Connect(to netip.Addr, p Params) uint32 {
	c := m.add(to)
	c.st, c.tid = reqSent, uint64(c.id)
	req := &cm.REQ{LocalCommID: c.id, ServiceID: p.ServiceID, LocalCAGUID: m.cfg.GUID, LocalQPN: p.QPN,
		StartingPSN: p.PSN, ResponderResources: p.ResponderResources, InitiatorDepth: p.InitiatorDepth,
		RemoteCMResponseTimeout: 20, LocalCMResponseTimeout: 20, RetryCount: p.RetryCount, RNRRetryCount: p.RNRRetryCount,
		PKey: 0xFFFF, PathMTU: p.PathMTU, MaxCMRetries: uint8(min(m.cfg.Retries, 15)),
		Primary: cm.Path{LocalLID: 0xFFFF, RemoteLID: 0xFFFF, LocalGID: cm.GID(m.cfg.Local), RemoteGID: cm.GID(to), HopLimit: 64},
		Private: p.Private}
	m.send(c, req, !m.defect(DefectNoREQRetry))
	return c.id
}

// Accept answers connection id's REQ with a REP, or its SIDR_REQ with a
// valid SIDR_REP (p.QPN, p.QKey).
func (m *Manager) Accept(id uint32, p Params) error {
	c := m.conns[id]
	if c != nil && c.st == sidrRcvd {
		m.answerSIDR(c, &cm.SIDRREP{RequestID: c.remoteID, Status: cm.SIDRValid, QPN: p.QPN, QKey: p.QKey, ServiceID: c.serviceID,
			Private: p.Private})
		return nil
	}
	if c == nil || c.st != reqRcvd {
		return fmt.Errorf("accept %d: %w", id, ErrNoConn)
	}
	c.st = repSent
	remoteID := c.remoteID
	if m.defect(DefectREPWrongRemoteID) {
		remoteID++
	}
	m.send(c, &cm.REP{LocalCommID: c.id, RemoteCommID: remoteID, LocalQPN: p.QPN, StartingPSN: p.PSN,
		ResponderResources: p.ResponderResources, InitiatorDepth: p.InitiatorDepth, RNRRetryCount: p.RNRRetryCount,
		TargetAckDelay: 15, LocalCAGUID: m.cfg.GUID, Private: p.Private}, !m.defect(DefectNoREPRetry))
	return nil
}

// Reject answers connection id's REQ with a REJ (reason: consumer), or
// its SIDR_REQ with a SIDR_REP of status rejected.
func (m *Manager) Reject(id uint32, private []byte) error {
	c := m.conns[id]
	if c != nil && c.st == sidrRcvd {
		m.answerSIDR(c, &cm.SIDRREP{RequestID: c.remoteID, Status: cm.SIDRRejected, ServiceID: c.serviceID, Private: private})
		return nil
	}
	if c == nil || c.st != reqRcvd {
		return fmt.Errorf("reject %d: %w", id, ErrNoConn)
	}
	m.reply(c.peer, c.tid, &cm.REJ{LocalCommID: c.id, RemoteCommID: c.remoteID, Reason: cm.RejectConsumer, Private: private})
	m.drop(c)
	return nil
}

// Confirm completes active connection id, whose REP came (Replied): it
// sends the RTU, and the connection is established.
func (m *Manager) Confirm(id uint32) error {
	c := m.conns[id]
	if c == nil || c.st != repRcvd {
		return fmt.Errorf("confirm %d: %w", id, ErrNoConn)
	}
	c.st = established
	m.send(c, &cm.RTU{LocalCommID: c.id, RemoteCommID: c.remoteID}, false)
	return nil
}

// Delay tells the peer of connection id, whose REQ (or REP) the consumer
// has not answered yet, to wait up to 4.096 µs × 2^serviceTimeout more
// (an MRA), as rdma_cm does when it hands a request or a reply to a
// program.
func (m *Manager) Delay(id uint32, serviceTimeout uint8) error {
	c := m.conns[id]
	if c == nil || c.st != reqRcvd && c.st != repRcvd {
		return fmt.Errorf("delay %d: %w", id, ErrNoConn)
	}
	var what uint8 // the REQ
	if c.st == repRcvd {
		what = 1 // the REP
	}
	m.reply(c.peer, c.tid, &cm.MRA{LocalCommID: c.id, RemoteCommID: c.remoteID, MessageMRAed: what, ServiceTimeout: serviceTimeout})
	return nil
}

// Close ends connection id whatever its state, for a consumer that goes
// away (rdma_destroy_id): an established connection is disconnected (a
// DREQ), a request not yet answered is rejected; nothing is reported.
func (m *Manager) Close(id uint32) {
	c := m.conns[id]
	if c == nil {
		return
	}
	switch c.st {
	case established:
		c.quiet = true
		m.Disconnect(id)
	case reqRcvd:
		m.Reject(id, nil)
	case sidrRcvd:
		m.Reject(id, nil)
	case dreqSent:
		c.quiet = true
	default:
		m.drop(c)
	}
}

// Resolve sends a SIDR_REQ for p.ServiceID to the port at to and returns
// the request's ID: Established (Remote.QPN, Remote.QKey) or Rejected
// follows, or Unreachable.
func (m *Manager) Resolve(to netip.Addr, p Params) uint32 {
	c := m.add(to)
	c.st, c.tid = sidrSent, uint64(c.id)
	m.send(c, &cm.SIDRREQ{RequestID: c.id, PKey: 0xFFFF, ServiceID: p.ServiceID, Private: p.Private}, true)
	return c.id
}

// answerSIDR sends a passive UD request's answer and keeps it, for a
// SIDR_REQ sent again, until the peer's retries are over.
func (m *Manager) answerSIDR(c *conn, rep *cm.SIDRREP) {
	c.st = sidrAnswered
	m.send(c, rep, false)
	c.timer = m.cfg.Sched.AfterFunc(m.cfg.Timeout*clock.Duration(m.cfg.Retries+1), func() { m.drop(c) })
}

// Disconnect sends a DREQ for established connection id.
func (m *Manager) Disconnect(id uint32) error {
	c := m.conns[id]
	if c == nil || c.st != established {
		return fmt.Errorf("disconnect %d: %w", id, ErrNoConn)
	}
	c.st, c.tid = dreqSent, c.tid+1<<32
	m.send(c, &cm.DREQ{LocalCommID: c.id, RemoteCommID: c.remoteID, RemoteQPN: c.remoteQPN}, true)
	return nil
}

func (m *Manager) add(peer netip.Addr) *conn {
	c := &conn{id: m.next, peer: peer}
	m.next++
	m.conns[c.id] = c
	return c
}

func (m *Manager) drop(c *conn) {
	m.stop(c)
	delete(m.conns, c.id)
	delete(m.byRemote, remoteKey{c.peer, c.remoteID})
}

func (m *Manager) stop(c *conn) {
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
}

func (m *Manager) event(e Event) {
	if m.cfg.Event != nil {
		m.cfg.Event(e)
	}
}

// send sends msg on c and, if it waits for an answer, arms the retry.
func (m *Manager) send(c *conn, msg cm.Message, wait bool) {
	m.stop(c)
	c.last, c.tries = cm.AppendMAD(nil, c.tid, msg), 0
	m.cfg.Send(c.peer, c.last)
	if wait {
		m.arm(c)
	}
}

func (m *Manager) arm(c *conn) {
	c.timer = m.cfg.Sched.AfterFunc(m.cfg.Timeout, func() { m.timeout(c) })
}

// timeout sends c's last message again, or gives up after the retries.
func (m *Manager) timeout(c *conn) {
	c.timer = nil
	if c.tries >= m.cfg.Retries {
		st := c.st
		m.drop(c)
		if c.quiet {
			return
		}
		if st == dreqSent {
			m.event(Event{Kind: Disconnected, ID: c.id, Peer: c.peer})
			return
		}
		m.event(Event{Kind: Unreachable, ID: c.id, Peer: c.peer})
		return
	}
	c.tries++
	m.cfg.Send(c.peer, c.last)
	m.arm(c)
}

// reply sends a message that waits for nothing to peer.
func (m *Manager) reply(peer netip.Addr, tid uint64, msg cm.Message) {
	m.cfg.Send(peer, cm.AppendMAD(nil, tid, msg))
}
