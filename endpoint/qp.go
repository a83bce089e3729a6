package endpoint

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/metaroce"
)

// Mode is a QP's reliability mode.
type Mode uint8

// Reliability modes.
const (
	// ModeRoCEv2 is classic RoCEv2 RC: go-back-N, in-order receive.
	ModeRoCEv2 Mode = iota
	// ModeMetaRoCE asks for MetaRoCE (selective repeat, out-of-order
	// placement, multipath); it falls back to RoCEv2 against a peer that
	// does not agree.
	ModeMetaRoCE
)

func (m Mode) String() string {
	if m == ModeMetaRoCE {
		return "metaroce"
	}
	return "rocev2"
}

// MarshalText writes m as its name (rocev2, metaroce): the API's and
// reports' JSON carry the name.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads a name ParseMode takes.
func (m *Mode) UnmarshalText(b []byte) error {
	v, err := ParseMode(string(b))
	*m = v
	return err
}

// ParseMode parses "rocev2" or "metaroce".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "rocev2", "":
		return ModeRoCEv2, nil
	case "metaroce":
		return ModeMetaRoCE, nil
	}
	return 0, fmt.Errorf("unknown reliability mode %q (rocev2, metaroce)", s)
}

// ConnInfo is what two QPs exchange out of band to connect.
type ConnInfo struct {
	QPN  uint32
	PSN  uint32 // first PSN the QP will send
	IP   netip.Addr
	MAC  [6]byte
	MTU  int
	Mode Mode
	// Caps are the MetaRoCE capability bits the QP offers (0 for plain RoCEv2).
	Caps  uint32
	Paths int
}

// QPConfig configures a QP. Zero fields take the defaults named on them.
type QPConfig struct {
	SendCQ, RecvCQ *CQ
	// SRQ, if set, is the shared receive queue the QP takes its receive
	// WQEs from (it has none of its own; PostRecv fails).
	SRQ *SRQ
	// Type is the transport service (TypeRC by default).
	Type QPType
	// QKey is a UD QP's Q_Key: datagrams with another are dropped.
	QKey uint32
	Mode Mode
	// CC names the congestion-control algorithm (default "none").
	CC string
	// Paths is the number of UDP source ports a MetaRoCE QP sprays over
	// (default 1, at most MaxPaths).
	Paths int
	// MaxSendWR and MaxRecvWR bound the queues (default 4096).
	MaxSendWR, MaxRecvWR int
	// SignalAll completes every send WR, signaled or not.
	SignalAll bool
	// Timeout is the initial retransmission timeout (default 200 µs); it
	// doubles on every consecutive timeout, up to 64 × Timeout.
	Timeout clock.Duration
	// RetryCount is how many consecutive timeouts are retried before the
	// QP fails with StatusRetryExceeded (default 7; negative means 0).
	RetryCount int
	// RNRRetry is how many RNR NAKs in a row are retried (default 7, which
	// means without limit, as in InfiniBand).
	RNRRetry int
	// MinRNRTimer is the 5-bit RNR timer code the responder sends (default
	// 1: 10 µs).
	MinRNRTimer uint8
	// Window is the most PSNs in flight (default 4096, a power of two).
	Window int
	// AckCoalesce is how many in-order packets the responder takes before
	// it ACKs without being asked (default 16).
	AckCoalesce int
	// AckReqEvery sets AckReq on every n-th packet besides the last of
	// each message (default 16).
	AckReqEvery int
	// PSN is the first PSN (default: random).
	PSN uint32
	// HasPSN says PSN is set (PSN 0 is a valid choice).
	HasPSN bool
}

// MaxPaths is the most paths a MetaRoCE QP sprays over (the HELLO's Paths
// field and the path index are 8 bits; more paths than this only add
// controllers and timers).
const MaxPaths = 64

func (c *QPConfig) setDefaults(rng func() uint32) {
	if c.CC == "" {
		c.CC = "none"
	}
	if c.Paths <= 0 {
		c.Paths = 1
	}
	c.Paths = min(c.Paths, MaxPaths)
	if c.MaxSendWR <= 0 {
		c.MaxSendWR = 4096
	}
	if c.MaxRecvWR <= 0 {
		c.MaxRecvWR = 4096
	}
	if c.Timeout <= 0 {
		c.Timeout = 200 * clock.Microsecond
	}
	if c.RetryCount == 0 {
		c.RetryCount = 7
	}
	c.RetryCount = max(c.RetryCount, 0)
	if c.RNRRetry == 0 {
		c.RNRRetry = 7
	}
	if c.MinRNRTimer == 0 {
		c.MinRNRTimer = 1
	}
	if c.Window <= 0 {
		c.Window = 4096
	}
	for c.Window&(c.Window-1) != 0 {
		c.Window &= c.Window - 1
	}
	if c.AckCoalesce <= 0 {
		c.AckCoalesce = 16
	}
	if c.AckReqEvery <= 0 {
		c.AckReqEvery = 16
	}
	if !c.HasPSN {
		c.PSN = rng() & psnMask
	}
}

// State is a QP state.
type State uint8

// QP states.
const (
	StateReset State = iota
	StateInit
	StateRTR
	StateRTS
	StateError
)

func (s State) String() string { return [...]string{"RESET", "INIT", "RTR", "RTS", "ERROR"}[s] }

// QP is a reliable-connected queue pair.
type QP struct {
	// What a packet in or out touches of the QP itself comes first: its
	// state and the peer a header is built from in line 0, the packet and
	// byte counters in line 1, and QPs are allocated on a line (linedQP;
	// TestQPLayout). In a 2,048-rank all-reduce a received packet's count
	// was a cache miss on line 13, 4 % of the CPU.
	nic          *NIC
	state        State
	mode         Mode // the mode in force (RoCEv2 until MetaRoCE is agreed)
	active, idle bool
	remote       ConnInfo
	ctr          qpCounters

	pd       *PD
	cfg      QPConfig
	qpn      uint32
	mtu      int
	err      error
	dataPrio int

	neg negotiation
	req requester
	rsp responder

	// aggregated: the QP's telemetry is summed into the NIC's "others"
	// row (it was created with TelemetryQPRows QPs shown already).
	aggregated bool
	destroyed  bool
	ud         udState // TypeUD: the send side
}

// linedQP puts a QP on a cache line boundary, as linedNIC does a NIC.
type linedQP struct {
	_ [56]byte
	QP
}

// CreateQP creates a QP in the RESET state.
func (pd *PD) CreateQP(cfg QPConfig) (*QP, error) {
	n := pd.nic
	if cfg.SendCQ == nil || cfg.RecvCQ == nil {
		return nil, errors.New("create QP: send and receive CQs are required")
	}
	cfg.setDefaults(n.rng.Uint32)
	if n.mut(MutWindow8192) {
		cfg.Window *= 2
	}
	if n.mut(MutAckCoalesce64) {
		cfg.AckCoalesce = 64
	}
	if n.mut(MutRTO10x) {
		cfg.Timeout *= 10
	}
	if n.mut(MutRetryForever) {
		cfg.RetryCount = 1 << 30
	}
	if n.opts.CC != nil {
		if _, err := n.opts.CC.Get(cfg.CC); err != nil {
			return nil, fmt.Errorf("create QP: %w", err)
		}
	} else if cfg.CC != "none" {
		return nil, fmt.Errorf("create QP: congestion control %q but the NIC has no registry", cfg.CC)
	}
	if cfg.SRQ != nil {
		if cfg.SRQ.dead || cfg.SRQ.pd.nic != n {
			return nil, errors.New("create QP: the SRQ is destroyed or another NIC's")
		}
		cfg.SRQ.users++
	}
	n.nextQPN++
	qp := &new(linedQP).QP
	*qp = QP{nic: n, pd: pd, cfg: cfg, qpn: n.nextQPN & psnMask, mtu: n.opts.MTU, dataPrio: n.prio(n.opts.DataDSCP)}
	// Receive WRs may be posted (and the QP may fail) before RTR, where
	// the two halves get the rest of their state.
	qp.req.qp, qp.rsp.qp = qp, qp
	if n.shownQPs < TelemetryQPRows {
		n.shownQPs++
	} else {
		qp.aggregated, n.anyOthers = true, true
	}
	n.qps.Put(qp.qpn, qp)
	return qp, nil
}

// LineRate returns the line rate of the QP's NIC.
func (qp *QP) LineRate() clock.Rate { return qp.nic.opts.LineRate }

// PathMTU returns the largest payload of the QP's packets: its NIC's MTU,
// lowered to the peer's once connected (ToRTR).
func (qp *QP) PathMTU() int { return qp.mtu }

// Unsent reports whether a posted send WR has a packet the QP has not
// transmitted even once. While it does, none of its WRs after it can
// complete sooner than a round trip after that packet leaves.
func (qp *QP) Unsent() bool { return qp.req.maxSent < qp.req.allocSeq }

// QPN returns the QP number.
func (qp *QP) QPN() uint32 { return qp.qpn }

// State returns the QP state.
func (qp *QP) State() State { return qp.state }

// Mode returns the reliability mode in force: MetaRoCE only once both ends
// agreed.
func (qp *QP) Mode() Mode { return qp.mode }

// Err returns why the QP went to ERROR (nil otherwise).
func (qp *QP) Err() error { return qp.err }

// Info returns the connection information to hand the peer.
func (qp *QP) Info() ConnInfo {
	ci := ConnInfo{QPN: qp.qpn, PSN: qp.cfg.PSN, IP: qp.nic.opts.IP, MAC: qp.nic.opts.MAC,
		MTU: qp.nic.opts.MTU, Mode: qp.cfg.Mode, Paths: qp.cfg.Paths}
	if qp.cfg.Mode == ModeMetaRoCE {
		ci.Caps = metaroce.CapMetaRoCE | metaroce.CapTrim | metaroce.CapCredit
		if qp.cfg.Paths > 1 {
			ci.Caps |= metaroce.CapMultipath
		}
	}
	return ci
}

// ToInit moves the QP from RESET to INIT (receive WRs may be posted).
func (qp *QP) ToInit() error {
	if qp.state != StateReset {
		return fmt.Errorf("qp %#x: INIT from %v", qp.qpn, qp.state)
	}
	qp.state = StateInit
	return nil
}

// ToRTR moves the QP from INIT to RTR with the peer's connection info: it
// receives from now on.
func (qp *QP) ToRTR(remote ConnInfo) error {
	if qp.state != StateInit {
		return fmt.Errorf("qp %#x: RTR from %v", qp.qpn, qp.state)
	}
	if qp.cfg.Type == TypeUD {
		// A UD QP has no peer: each WR names its destination.
		qp.rsp.qp = qp
		qp.state = StateRTR
		return nil
	}
	if !remote.IP.IsValid() || remote.IP.Is4() != qp.nic.opts.IP.Is4() {
		return fmt.Errorf("qp %#x: RTR: bad remote IP %v", qp.qpn, remote.IP)
	}
	qp.remote = remote
	if remote.MTU > 0 {
		qp.mtu = min(qp.mtu, remote.MTU)
	}
	qp.rsp.init(qp, remote.PSN)
	if err := qp.req.init(qp); err != nil {
		return fmt.Errorf("qp %#x: RTR: %w", qp.qpn, err)
	}
	qp.state = StateRTR
	return nil
}

// SetSendPSN sets the first PSN the QP sends (verbs give it with the move
// to RTS, after the peer has learnt it); only before RTS.
func (qp *QP) SetSendPSN(psn uint32) error {
	if qp.state != StateReset && qp.state != StateInit && qp.state != StateRTR {
		return fmt.Errorf("qp %#x: send PSN in %v", qp.qpn, qp.state)
	}
	qp.cfg.PSN, qp.cfg.HasPSN = psn&psnMask, true
	if qp.state == StateRTR {
		return qp.req.init(qp)
	}
	return nil
}

// SetRetry sets how many timeouts and RNR NAKs in a row the QP retries
// (verbs' retry_cnt and rnr_retry; rnr 7 means without limit); only
// before RTS.
func (qp *QP) SetRetry(count, rnr int) error {
	if qp.state == StateRTS || qp.state == StateError {
		return fmt.Errorf("qp %#x: retry counts in %v", qp.qpn, qp.state)
	}
	if count < 0 || count > 7 || rnr < 0 || rnr > 7 {
		return fmt.Errorf("qp %#x: retry %d, rnr retry %d: each must be in [0, 7]", qp.qpn, count, rnr)
	}
	qp.cfg.RetryCount, qp.cfg.RNRRetry = count, rnr
	return nil
}

// ToRTS moves the QP from RTR to RTS: it sends from now on. A MetaRoCE QP
// whose peer offered MetaRoCE starts the in-band negotiation here; send
// WRs wait for its outcome.
func (qp *QP) ToRTS() error {
	if qp.state != StateRTR {
		return fmt.Errorf("qp %#x: RTS from %v", qp.qpn, qp.state)
	}
	qp.state = StateRTS
	if qp.cfg.Type == TypeUD {
		return nil
	}
	qp.neg.start(qp)
	return nil
}

// Connect runs RESET → INIT → RTR → RTS with the peer's info.
func (qp *QP) Connect(remote ConnInfo) error {
	if err := qp.ToInit(); err != nil {
		return err
	}
	if err := qp.ToRTR(remote); err != nil {
		return err
	}
	return qp.ToRTS()
}

// PostSend queues wr. It fails when the QP is not in RTS, the queue is
// full, or the local SGE is invalid (the last also as an error completion,
// and the QP goes to ERROR, as a NIC would).
func (qp *QP) PostSend(wr SendWR) error {
	if qp.state != StateRTS {
		return fmt.Errorf("qp %#x: post send in %v", qp.qpn, qp.state)
	}
	if qp.cfg.Type == TypeUD {
		return qp.postUD(wr)
	}
	return qp.req.post(wr)
}

// PostRecv queues a receive buffer.
func (qp *QP) PostRecv(wr RecvWR) error {
	if qp.state == StateReset || qp.state == StateError {
		return fmt.Errorf("qp %#x: post recv in %v", qp.qpn, qp.state)
	}
	return qp.rsp.postRecv(wr)
}

// fail moves the QP to ERROR: the requester completes nothing more
// successfully and both queues are flushed.
func (qp *QP) fail(err error) {
	if qp.state == StateError {
		return
	}
	qp.state = StateError
	qp.err = err
	qp.req.flush()
	qp.rsp.flush()
	qp.neg.stop()
}

// ToError moves the QP to ERROR by request, flushing its queues.
func (qp *QP) ToError() { qp.fail(errors.New("moved to ERROR by the user")) }

// Destroy moves the QP to ERROR and forgets it.
func (qp *QP) Destroy() {
	qp.fail(errors.New("destroyed"))
	if srq := qp.cfg.SRQ; srq != nil && !qp.destroyed {
		srq.users--
	}
	qp.destroyed = true
	qp.req.closeCC()
	if held, _ := qp.nic.qps.Get(qp.qpn); held == qp {
		if qp.aggregated {
			qp.nic.othersGone.add(&qp.ctr)
		} else {
			qp.nic.retired.add(&qp.ctr)
			qp.nic.retiredQPs++
			qp.nic.shownQPs--
		}
	}
	qp.nic.qps.Delete(qp.qpn)
	if qp.nic.lastQP == qp {
		qp.nic.lastQP = nil
	}
}

// pull returns the next packet the QP may transmit now, or the earliest
// time it may (clock.Never when it has nothing to send).
func (qp *QP) pull(now clock.Time) (*wire.Packet, clock.Time) {
	if qp.state != StateRTS && qp.state != StateRTR {
		return nil, clock.Never
	}
	if qp.cfg.Type == TypeUD {
		return qp.pullUD(now)
	}
	// READ responses first (the responder's work), then requests.
	if p, at := qp.rsp.pullRead(now); p != nil {
		return p, 0
	} else if qp.state != StateRTS {
		return nil, at
	} else {
		p2, at2 := qp.req.pull(now)
		return p2, min(at, at2)
	}
}

// receive dispatches a RoCEv2 packet addressed to the QP.
func (qp *QP) receive(p *wire.Packet, trimmed bool) {
	qp.ctr.rxPkts++
	qp.ctr.rxBytes += int64(p.Len)
	if qp.state == StateReset || qp.state == StateInit || qp.state == StateError {
		qp.ctr.rxDropped++
		return
	}
	if qp.cfg.Type == TypeUD {
		qp.receiveUD(p)
		return
	}
	op := wire.Opcode(p.Opcode)
	if op <= wire.OpReadResponseOnly || op >= metaroce.OpDataBase {
		if p.ECN == wire.ECNCE {
			qp.notifyCE(p)
		}
		if op <= wire.OpReadRequest || op >= metaroce.OpDataBase && op < metaroce.OpDataBase|wire.OpReadResponseFirst {
			qp.creditData(p)
		}
	}
	if base, ok := metaroce.IsDataOpcode(op); ok {
		if base >= wire.OpReadResponseFirst {
			qp.req.onReadResponse(p, base, trimmed)
		} else {
			qp.rsp.onRequest(p, base, trimmed)
		}
		return
	}
	switch {
	case op <= wire.OpReadRequest:
		qp.rsp.onRequest(p, op, trimmed)
	case op <= wire.OpReadResponseOnly:
		qp.req.onReadResponse(p, op, trimmed)
	case op == wire.OpAcknowledge:
		if !trimmed {
			qp.req.onAck(p)
		}
	case op == wire.OpAtomicAcknowledge:
		qp.req.onReadResponse(p, op, trimmed)
	case isAtomic(op):
		qp.onAtomicRequest(p, op, trimmed)
	case op == metaroce.OpSACK:
		qp.req.onSACK(p)
	case op == metaroce.OpHello || op == metaroce.OpHelloAck:
		qp.neg.onHello(qp, p)
	case op == metaroce.OpCreditGrant || op == metaroce.OpCreditReq:
		qp.onCredit(p, op)
	default:
		qp.ctr.rxDropped++
	}
}

// notifyCE is the ECN notification point: a CE-marked data packet makes
// the QP send a CNP to the sender's QP, at most one per CNPInterval per
// source port (path) of the sender.
func (qp *QP) notifyCE(p *wire.Packet) {
	n := qp.nic
	qp.ctr.ceRx++
	now := n.sched.Now()
	for i := range qp.rsp.cnpLast {
		e := &qp.rsp.cnpLast[i]
		if e.port == p.SrcPort || n.mut(MutCNPPerQP) {
			if now < e.at.Add(n.opts.CNPInterval) && !n.mut(MutNoCNPRateLimit) {
				return
			}
			e.at = now
			qp.sendCNP(p.SrcPort)
			return
		}
	}
	qp.rsp.cnpLast = append(qp.rsp.cnpLast, cnpStamp{port: p.SrcPort, at: now})
	qp.sendCNP(p.SrcPort)
}

// sendCNP sends a CNP for the peer QP. Its UDP source port echoes the
// marked packet's, naming the sender's path.
func (qp *QP) sendCNP(port uint16) {
	n := qp.nic
	if n.mut(MutCNPNoEcho) {
		port = qp.pathPort(0, 0)
	}
	p := qp.header(wire.OpCNP, n.opts.CNPDSCP, false, port, 0)
	p.Kind = wire.KindCNP
	p.BECN = true
	if n.opts.Raw {
		n.finish(p, true, nil, nil, 0)
	} else {
		p.Len = frameLen(p.IPVersion == 6, 0, wire.CNPReservedLen)
	}
	qp.ctr.cnpTx++
	n.sendCtrl(p)
}

type cnpStamp struct {
	port uint16
	at   clock.Time
}
