package verbs

import (
	"context"
	"net"
	"net/netip"
	"os"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint/connmgr"
	"github.com/rocelab/rocelab/wire/cm"
)

// rdma_cm over the verbs socket: the requests of rocelab's librdmacm
// (librdmacm/, proto.h's RL_OP_CM_*), served by each NIC's Communication
// Manager (endpoint/connmgr), whose MADs cross the fabric on QP1.

const (
	opCMChannel        = 20
	opCMDestroyChannel = 21
	opCMCreateID       = 22
	opCMDestroyID      = 23
	opCMBind           = 24
	opCMResolveAddr    = 25
	opCMResolveRoute   = 26
	opCMListen         = 27
	opCMConnect        = 28
	opCMAccept         = 29
	opCMReject         = 30
	opCMEstablish      = 31
	opCMDisconnect     = 32
	opCMMigrate        = 33

	cmAddrSize     = 24
	cmCreateIDSize = 16
	cmResolveSize  = 56
	cmBoundSize    = 56
	cmConnSize     = 280
	cmEventSize    = 352
	cmPrivate      = 256
)

// RDMA_CM_EVENT_* (rdma/rdma_cma.h).
const (
	evAddrResolved    = 0
	evAddrError       = 1
	evRouteResolved   = 2
	evConnectRequest  = 4
	evConnectResponse = 5
	evUnreachable     = 7
	evRejected        = 8
	evEstablished     = 9
	evDisconnected    = 10
)

// rdma_cm's port spaces and the Q_Key of its UD QPs (RDMA_UDP_QKEY).
const (
	psTCP   = cm.PortSpaceTCP
	psUDP   = cm.PortSpaceUDP
	psIB    = 0x013F
	udpQKey = 0x01234567
)

// Errno values of the CM's answers.
const (
	eADDRINUSE    = 98
	eADDRNOTAVAIL = 99
	eHOSTUNREACH  = 113
	eTIMEDOUT     = 110
	eCONNREFUSED  = 111
	eISCONN       = 106
	eNOTCONN      = 107
)

// DefaultCMTimeout is how long the lab's CM waits for an answer before it
// sends a message again, in fabric time: 4.096 µs × 2^8 ≈ 1 ms, where
// rdma_cm waits 2^20 (4.3 s) across a real data centre. A fabric's round
// trip is microseconds and a program's own slowness is covered by MRAs,
// as rdma_cm does; at the lab's scale factor a 4.3 s wait would be hours.
const DefaultCMTimeout = 4096 * clock.Nanosecond << 8

// cmMRATimeout is the service timeout of the MRA sent when a request or
// reply goes to a program (rdma_cm's CMA_CM_MRA_SETTING: 2^24 × 4.096 µs).
const cmMRATimeout = 24

type cmAddr struct {
	ip     netip.Addr // unmapped; invalid: any
	port   uint16
	family uint16
}

func getCMAddr(b []byte) cmAddr {
	a := cmAddr{port: le.Uint16(b[16:]), family: le.Uint16(b[18:])}
	if ip := netip.AddrFrom16([16]byte(b[:16])); !ip.IsUnspecified() {
		a.ip = ip.Unmap()
	}
	return a
}

func putCMAddr(b []byte, a cmAddr) {
	if a.ip.IsValid() {
		raw := a.ip.As16()
		copy(b, raw[:])
	}
	le.PutUint16(b[16:], a.port)
	le.PutUint16(b[18:], a.family)
}

type cmConnParams struct {
	qpn, psn, qkey                             uint32
	responder, initiator, retry, rnr, srq, mtu uint8
	private                                    []byte
}

func getCMConn(b []byte) cmConnParams {
	n := min(int(le.Uint32(b[20:])), cmPrivate)
	return cmConnParams{qpn: le.Uint32(b), psn: le.Uint32(b[4:]), qkey: le.Uint32(b[8:]), responder: b[12], initiator: b[13],
		retry: b[14], rnr: b[15], srq: b[16], mtu: b[17], private: append([]byte(nil), b[24:24+n]...)}
}

func putCMConn(b []byte, p cmConnParams) {
	le.PutUint32(b, p.qpn)
	le.PutUint32(b[4:], p.psn)
	le.PutUint32(b[8:], p.qkey)
	b[12], b[13], b[14], b[15], b[16], b[17] = p.responder, p.initiator, p.retry, p.rnr, p.srq, p.mtu
	n := copy(b[24:24+cmPrivate], p.private)
	le.PutUint32(b[20:], uint32(n))
}

// cmChannel is an event channel: the node's end of the program's
// socketpair and the goroutine that writes to it.
type cmChannel struct {
	h      uint32
	out    chan []byte
	uc     *net.UnixConn
	closed bool // the program destroyed it (loop goroutine)
}

// cmID is an rdma_cm_id of a program.
type cmID struct {
	h     uint32
	owner *conn
	ch    *cmChannel
	ps    uint16
	ud    bool
	nic   int // -1: not bound to a NIC (none yet, or every NIC)
	bound bool
	local cmAddr
	// remote is the peer NIC's address once resolved (the connection's
	// peer on the passive side).
	remote   cmAddr
	resolved bool
	listens  []cmListenKey
	// conv is the connection (or UD resolution) in the NIC's CM, if any.
	conv *cmConvKey
}

type cmListenKey struct {
	nic     int
	service uint64
}

type cmConvKey struct {
	nic int
	id  uint32
}

// cmState is the server's rdma_cm state, touched on the loop goroutine.
type cmState struct {
	next      uint32
	ids       map[uint32]*cmID
	convs     map[cmConvKey]*cmID
	listeners map[cmListenKey]*cmID
	mgrs      []*connmgr.Manager
	nextPort  uint16
}

func (s *Server) cmInit() {
	s.cm = cmState{ids: map[uint32]*cmID{}, convs: map[cmConvKey]*cmID{}, listeners: map[cmListenKey]*cmID{},
		mgrs: make([]*connmgr.Manager, len(s.opts.NICs)), nextPort: 40000}
}

// manager starts NIC i's CM (loop goroutine).
func (s *Server) manager(i int) *connmgr.Manager {
	if s.cm.mgrs[i] == nil {
		s.cm.mgrs[i] = s.opts.NICs[i].NIC.StartCM(connmgr.Config{Timeout: s.opts.CMTimeout,
			Event: func(e connmgr.Event) { s.cmEvent(i, e) }})
	}
	return s.cm.mgrs[i]
}

// cmDo runs f on the loop.
func (c *conn) cmDo(ctx context.Context, f func() error) error { return c.do(ctx, f) }

// openChannel takes the node's end of a program's event channel.
func (c *conn) openChannel(fds []int) ([]byte, error) {
	if len(fds) != 1 {
		return nil, fail(ePROTO, "event channel: %d descriptors, want 1", len(fds))
	}
	f := os.NewFile(uintptr(fds[0]), "rdma_cm channel")
	fc, err := net.FileConn(f) // a duplicate: handle closes fds[0]
	f.Close()
	if err != nil {
		return nil, fail(eINVAL, "event channel: %v", err)
	}
	uc, ok := fc.(*net.UnixConn)
	if !ok {
		fc.Close()
		return nil, fail(eINVAL, "event channel: not a Unix socket")
	}
	c.next++
	ch := &cmChannel{h: c.next, out: make(chan []byte, 4096), uc: uc}
	c.channels[ch.h] = ch
	go func() {
		defer uc.Close()
		for ev := range ch.out {
			if _, err := uc.Write(ev); err != nil {
				for range ch.out { // the program closed it: drain
				}
				return
			}
		}
	}()
	return handle32(ch.h), nil
}

// post queues ev on id's channel (loop goroutine): an event the program
// does not read within 4096 others is dropped, and said.
func (s *Server) post(id *cmID, ev []byte) {
	if id.ch == nil {
		return
	}
	select {
	case id.ch.out <- ev:
	default:
		s.opts.Log.Warn("rdma_cm event dropped: the program reads none of its channel's events", "id", id.h)
	}
}

// event builds an rl_cm_event for id.
func (id *cmID) event(kind uint32, status int32, p cmConnParams) []byte {
	b := make([]byte, cmEventSize)
	le.PutUint32(b, id.h)
	le.PutUint32(b[4:], kind)
	le.PutUint32(b[8:], uint32(status))
	le.PutUint32(b[16:], uint32(int32(id.nic)))
	putCMAddr(b[24:], id.local)
	putCMAddr(b[48:], id.remote)
	putCMConn(b[72:], p)
	return b
}
