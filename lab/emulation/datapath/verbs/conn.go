package verbs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rocelab/rocelab/endpoint"
)

// conn is one open device of one program: the objects it created. The
// maps are touched on the loop goroutine only; the mappings are made and
// released on the connection's goroutine.
type conn struct {
	s    *Server
	uc   *net.UnixConn
	nic  int // -1 until OPEN
	cc   string
	mode endpoint.Mode

	next uint32
	pds  map[uint32]*endpoint.PD
	mrs  map[uint32]*memRegion
	cqs  map[uint32]*compQueue
	qps  map[uint32]*queuePair
	srqs map[uint32]*sharedRQ
	// channels are the rdma_cm event channels the program opened here.
	channels map[uint32]*cmChannel

	// pending is set when a ring is full and completions wait (any
	// goroutine reads it; the loop writes it).
	pending atomic.Bool
	// unmaps are mappings of deregistered regions, released when the
	// connection ends (a WR in flight may still name the region).
	unmaps [][]byte
}

type memRegion struct {
	mr  *endpoint.MR
	mem []byte // the mapping to release
	pd  uint32
}

type compQueue struct {
	cq   *endpoint.CQ
	ring *ring
	refs int
}

type queuePair struct {
	qp         *endpoint.QP
	pd         uint32
	send, recv uint32
	maxInline  int
	maxSend    int
	inline     *inlineBuf
}

func newConn(s *Server, uc *net.UnixConn) *conn {
	return &conn{s: s, uc: uc, nic: -1, pds: map[uint32]*endpoint.PD{}, mrs: map[uint32]*memRegion{},
		cqs: map[uint32]*compQueue{}, qps: map[uint32]*queuePair{}, srqs: map[uint32]*sharedRQ{}, channels: map[uint32]*cmChannel{}}
}

// serve reads requests until the program closes the device (or exits),
// then frees everything the connection made.
func (c *conn) serve(ctx context.Context) {
	defer c.uc.Close()
	defer c.release()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if c.pending.Load() {
					c.s.opts.Loop.Post(c.flushRings)
				}
			}
		}
	}()
	buf := make([]byte, hdrSize+maxMsg)
	oob := make([]byte, unix.CmsgSpace(4*maxPieces))
	for {
		n, oobn, _, _, err := c.uc.ReadMsgUnix(buf, oob)
		if err != nil || n == 0 {
			return
		}
		fds, ferr := parseFDs(oob[:oobn])
		reply, err := c.handle(ctx, buf[:n], fds, ferr)
		for _, fd := range fds {
			unix.Close(fd)
		}
		if err == errNoReply {
			continue // a post: no reply
		}
		if err := c.reply(reply, err); err != nil {
			return
		}
	}
}

func parseFDs(oob []byte) ([]int, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		f, err := unix.ParseUnixRights(&m)
		if err != nil {
			return fds, err
		}
		fds = append(fds, f...)
	}
	return fds, nil
}

// errNoReply marks a request that is answered by nothing (the data path).
var errNoReply = errors.New("no reply")

func (c *conn) reply(body []byte, err error) error {
	out := make([]byte, replySize, replySize+len(body))
	if err != nil {
		var ve *verbsError
		errno := int32(eINVAL)
		if errors.As(err, &ve) {
			errno = ve.errno
		}
		le.PutUint32(out[0:], uint32(errno))
		copy(out[8:replySize-1], err.Error())
		c.s.opts.Log.Debug("verbs request failed", "err", err)
	} else {
		le.PutUint32(out[4:], uint32(len(body)))
		out = append(out, body...)
	}
	_, werr := c.uc.Write(out)
	return werr
}

// do runs f on the loop and returns its error.
func (c *conn) do(ctx context.Context, f func() error) error {
	var ferr error
	if err := c.s.opts.Loop.Do(ctx, func() { ferr = f() }); err != nil {
		return fail(eNODEV, "the node is stopping: %v", err)
	}
	return ferr
}

func (c *conn) handle(ctx context.Context, msg []byte, fds []int, fdErr error) ([]byte, error) {
	if len(msg) < hdrSize {
		return nil, fail(ePROTO, "short message (%d bytes)", len(msg))
	}
	op, h, n := le.Uint32(msg), le.Uint32(msg[4:]), le.Uint32(msg[8:])
	body := msg[hdrSize:]
	if int(n) != len(body) {
		return nil, fail(ePROTO, "message says %d bytes, has %d", n, len(body))
	}
	if fdErr != nil {
		return nil, fail(ePROTO, "passed descriptors: %v", fdErr)
	}
	if reply, err, ok := c.handleCM(ctx, op, h, body, fds); ok {
		return reply, err
	}
	if op != opHello && op != opOpen && c.nic < 0 {
		return nil, fail(ePROTO, "request %d before the device is open", op)
	}
	switch op {
	case opHello:
		if len(body) < 4 || le.Uint32(body) != protoVersion {
			return nil, fail(ePROTO, "protocol version mismatch: this node speaks %d", protoVersion)
		}
		devs := c.s.devices()
		out := make([]byte, 8, 8+len(devs))
		le.PutUint32(out, protoVersion)
		le.PutUint32(out[4:], uint32(len(c.s.opts.NICs)))
		return append(out, devs...), nil
	case opOpen:
		return nil, c.open(int(h), body)
	case opAllocPD:
		return c.allocPD(ctx)
	case opDeallocPD:
		return nil, c.deallocPD(ctx, h)
	case opRegMR:
		return c.regMR(ctx, body, fds)
	case opDeregMR:
		return nil, c.deregMR(ctx, h)
	case opCreateCQ:
		return c.createCQ(ctx, body, fds)
	case opDestroyCQ:
		return nil, c.destroyCQ(ctx, h)
	case opCreateQP:
		return c.createQP(ctx, body)
	case opModifyQP:
		if len(body) < modifyQPSize {
			return nil, fail(ePROTO, "modify QP: short body")
		}
		return nil, c.modifyQP(ctx, h, readModifyQP(body))
	case opDestroyQP:
		return nil, c.destroyQP(ctx, h)
	case opQueryQP:
		return c.queryQP(ctx, h)
	case opPostSend:
		c.postSend(h, body)
		return nil, errNoReply
	case opPostRecv:
		c.postRecv(h, body)
		return nil, errNoReply
	case opCreateSRQ:
		return c.createSRQ(ctx, body)
	case opModifySRQ:
		return nil, c.modifySRQ(ctx, h, body)
	case opQuerySRQ:
		return c.querySRQ(ctx, h)
	case opDestroySRQ:
		return nil, c.destroySRQ(ctx, h)
	case opPostSRQRecv:
		c.postSRQRecv(h, body)
		return nil, errNoReply
	}
	return nil, fail(eOPNOTSUPP, "unknown request %d", op)
}

func (c *conn) open(nic int, body []byte) error {
	if c.nic >= 0 {
		return fail(eINVAL, "device already open on this connection")
	}
	if nic < 0 || nic >= len(c.s.opts.NICs) {
		return fail(eNODEV, "no NIC %d (the node has %d)", nic, len(c.s.opts.NICs))
	}
	cc, mode := c.s.opts.CC, endpoint.ModeRoCEv2
	if len(body) >= openSize {
		if s := trimNUL(body[0:16]); s != "" {
			cc = s
		}
		if s := trimNUL(body[16:32]); s != "" {
			m, err := endpoint.ParseMode(s)
			if err != nil {
				return fail(eINVAL, "ROCELAB_VERBS_MODE: %v", err)
			}
			mode = m
		}
	}
	if _, err := endpoint.CCRegistry().Get(cc); err != nil {
		return fail(eINVAL, "ROCELAB_VERBS_CC: %v", err)
	}
	c.nic, c.cc, c.mode = nic, cc, mode
	return nil
}

// handle32 is a reply holding one handle (struct rl_handle_reply).
func handle32(v uint32) []byte {
	out := make([]byte, 8)
	le.PutUint32(out, v)
	return out
}

func (c *conn) allocPD(ctx context.Context) ([]byte, error) {
	var h uint32
	err := c.do(ctx, func() error {
		c.next++
		h = c.next
		c.pds[h] = c.s.opts.NICs[c.nic].NIC.AllocPD()
		return nil
	})
	return handle32(h), err
}

func (c *conn) deallocPD(ctx context.Context, h uint32) error {
	return c.do(ctx, func() error {
		if c.pds[h] == nil {
			return fail(eINVAL, "no PD %d", h)
		}
		for _, m := range c.mrs {
			if m.pd == h {
				return fail(eBUSY, "PD %d still has memory regions", h)
			}
		}
		for _, q := range c.qps {
			if q.pd == h {
				return fail(eBUSY, "PD %d still has QPs", h)
			}
		}
		for _, s := range c.srqs {
			if s.pd == h {
				return fail(eBUSY, "PD %d still has SRQs", h)
			}
		}
		delete(c.pds, h)
		return nil
	})
}

// ibv_access_flags rocelab knows; flags from IBV_ACCESS_OPTIONAL_FIRST
// (1<<20) up are hints a provider may ignore.
const (
	ibvLocalWrite   = 1
	ibvRemoteWrite  = 2
	ibvRemoteRead   = 4
	ibvRemoteAtomic = 8
	ibvOptional     = 1 << 20
)

func accessOf(flags uint32) (endpoint.Access, error) {
	if rest := flags & (ibvOptional - 1) &^ (ibvLocalWrite | ibvRemoteWrite | ibvRemoteRead | ibvRemoteAtomic); rest != 0 {
		return 0, fail(eOPNOTSUPP, "access flags %#x are not supported (memory windows, zero-based or on-demand regions)", rest)
	}
	var a endpoint.Access
	if flags&ibvLocalWrite != 0 {
		a |= endpoint.AccessLocalWrite
	}
	if flags&ibvRemoteWrite != 0 {
		a |= endpoint.AccessRemoteWrite
	}
	if flags&ibvRemoteRead != 0 {
		a |= endpoint.AccessRemoteRead
	}
	if flags&ibvRemoteAtomic != 0 {
		a |= endpoint.AccessRemoteAtomic
	}
	return a, nil
}

func (c *conn) regMR(ctx context.Context, body []byte, fds []int) ([]byte, error) {
	if len(body) < regMRSize {
		return nil, fail(ePROTO, "register memory: short body")
	}
	pd, access, addr, length, np := le.Uint32(body), le.Uint32(body[4:]), le.Uint64(body[8:]), le.Uint64(body[16:]), int(le.Uint32(body[24:]))
	if np < 1 || np > maxPieces || len(body) != regMRSize+np*pieceSize || len(fds) != np {
		return nil, fail(ePROTO, "register memory: %d pieces, %d descriptors", np, len(fds))
	}
	acc, err := accessOf(access)
	if err != nil {
		return nil, err
	}
	pieces := make([]piece, np)
	for i := range pieces {
		b := body[regMRSize+i*pieceSize:]
		pieces[i] = piece{addr: le.Uint64(b), len: le.Uint64(b[8:]), offset: le.Uint64(b[16:]), fd: fds[i]}
	}
	mem, buf, err := mapRegion(addr, length, pieces)
	if err != nil {
		return nil, fail(eINVAL, "register %d bytes at %#x: %v", length, addr, err)
	}
	var out []byte
	err = c.do(ctx, func() error {
		p := c.pds[pd]
		if p == nil {
			return fail(eINVAL, "no PD %d", pd)
		}
		mr, err := p.RegMRAt(buf, addr, acc)
		if err != nil {
			return fail(eINVAL, "%v", err)
		}
		c.next++
		c.mrs[c.next] = &memRegion{mr: mr, mem: mem, pd: pd}
		out = make([]byte, 16)
		le.PutUint32(out, c.next)
		le.PutUint32(out[4:], mr.LKey)
		le.PutUint32(out[8:], mr.RKey)
		return nil
	})
	if err != nil {
		unmap(mem)
	}
	return out, err
}

func (c *conn) deregMR(ctx context.Context, h uint32) error {
	var mem []byte
	err := c.do(ctx, func() error {
		m := c.mrs[h]
		if m == nil {
			return fail(eINVAL, "no memory region %d", h)
		}
		m.mr.Dereg()
		delete(c.mrs, h)
		mem = m.mem
		return nil
	})
	if mem != nil {
		c.unmaps = append(c.unmaps, mem)
	}
	return err
}

func (c *conn) createCQ(ctx context.Context, body []byte, fds []int) ([]byte, error) {
	if len(body) < 8 || len(fds) != 1 {
		return nil, fail(ePROTO, "create CQ: want a size and one descriptor")
	}
	entries := le.Uint32(body)
	if entries < 2 || entries > maxCQEntries || entries&(entries-1) != 0 {
		return nil, fail(eINVAL, "create CQ: %d entries (a power of two up to %d)", entries, maxCQEntries)
	}
	r, err := mapRing(fds[0], entries)
	if err != nil {
		return nil, fail(eINVAL, "create CQ: %v", err)
	}
	var h uint32
	err = c.do(ctx, func() error {
		q := &compQueue{cq: c.s.opts.NICs[c.nic].NIC.CreateCQ(0), ring: r}
		q.cq.OnCompletion(func(wc endpoint.WC) { c.push(q, completion(wc)) })
		c.next++
		h = c.next
		c.cqs[h] = q
		return nil
	})
	if err != nil {
		r.unmap()
	}
	return handle32(h), err
}

func (c *conn) destroyCQ(ctx context.Context, h uint32) error {
	var r *ring
	err := c.do(ctx, func() error {
		q := c.cqs[h]
		if q == nil {
			return fail(eINVAL, "no CQ %d", h)
		}
		if q.refs > 0 {
			return fail(eBUSY, "CQ %d is used by %d QPs", h, q.refs)
		}
		q.cq.OnCompletion(func(endpoint.WC) {})
		delete(c.cqs, h)
		r = q.ring
		return nil
	})
	if r != nil {
		r.unmap()
	}
	return err
}

// push puts a completion into q's ring (loop goroutine).
func (c *conn) push(q *compQueue, e cqe) {
	if !q.ring.push(e) {
		c.pending.Store(true)
	}
}

// flushRings moves waiting completions into rings with room (loop).
func (c *conn) flushRings() {
	any := false
	for _, q := range c.cqs {
		if !q.ring.flush() {
			any = true
		}
	}
	c.pending.Store(any)
}

// ibv_wc_status and ibv_wc_opcode of the model's completions.
var (
	wcStatus = map[endpoint.Status]uint8{
		endpoint.StatusSuccess: 0, endpoint.StatusLocalLength: 1, endpoint.StatusLocalProtection: 4,
		endpoint.StatusFlush: 5, endpoint.StatusRemoteInvalidRequest: 9, endpoint.StatusRemoteAccess: 10,
		endpoint.StatusRemoteOperational: 11, endpoint.StatusRetryExceeded: 12, endpoint.StatusRNRRetryExceeded: 13,
	}
	wcOpcode = map[endpoint.WCOpcode]uint8{
		endpoint.WCSend: 0, endpoint.WCWrite: 1, endpoint.WCRead: 2, endpoint.WCCompSwap: 3, endpoint.WCFetchAdd: 4,
		endpoint.WCRecv: 128, endpoint.WCRecvWriteImm: 129,
	}
)

const (
	wcGRH = 1 << 0 // IBV_WC_GRH
	// The packet type of a UD receive over RoCE in ibv_wc.sl, as mlx5
	// reports it: UDP (bit 3) over IPv4 (0x2) or IPv6 (0x1).
	roceUDPIPv4  = 0x8 | 0x2
	roceUDPIPv6  = 0x8 | 0x1
	wcWithImm    = 1 << 1 // IBV_WC_WITH_IMM
	wcGeneralErr = 21     // IBV_WC_GENERAL_ERR
	wcLocQPOpErr = 2      // IBV_WC_LOC_QP_OP_ERR
)

func completion(wc endpoint.WC) cqe {
	e := cqe{WRID: wc.WRID, ByteLen: wc.ByteLen, QPN: wc.QPN}
	st, ok := wcStatus[wc.Status]
	if !ok {
		st = wcGeneralErr
	}
	e.Status, e.Opcode = st, wcOpcode[wc.Opcode]
	if wc.HasImm {
		e.Flags |= wcWithImm
		e.Imm = swap32(wc.Imm)
	}
	if wc.GRH {
		e.Flags |= wcGRH
		e.SrcQP = wc.SrcQP
		e.SL = roceUDPIPv4
		if wc.IPv6 {
			e.SL = roceUDPIPv6
		}
	}
	return e
}

// swap32 turns the model's immediate value into the bytes a program
// reads as __be32, and back.
func swap32(v uint32) uint32 { return v>>24 | v>>8&0xff00 | v<<8&0xff0000 | v<<24 }

// release frees everything the connection made: its QPs first (on the
// loop), then the memory the model no longer touches.
func (c *conn) release() {
	var mems [][]byte
	var rings []*ring
	_ = c.s.opts.Loop.Do(context.Background(), func() {
		c.releaseCM()
		for h, q := range c.qps {
			q.qp.Destroy()
			c.s.qps[c.nic]--
			delete(c.qps, h)
		}
		for h, s := range c.srqs {
			s.srq.Destroy()
			delete(c.srqs, h)
		}
		for h, m := range c.mrs {
			m.mr.Dereg()
			mems = append(mems, m.mem)
			delete(c.mrs, h)
		}
		for h, q := range c.cqs {
			q.cq.OnCompletion(func(endpoint.WC) {})
			rings = append(rings, q.ring)
			delete(c.cqs, h)
		}
	})
	for _, m := range append(mems, c.unmaps...) {
		unmap(m)
	}
	for _, r := range rings {
		r.unmap()
	}
	c.unmaps = nil
}

// ipOfGID returns the IPv4 address of an IPv4-mapped GID (RoCE v2 GIDs
// of IPv4 addresses), or the IPv6 address of another routable GID.
func ipOfGID(g [16]byte) (netip.Addr, error) {
	a := netip.AddrFrom16(g)
	if a.Is4In6() {
		return a.Unmap(), nil
	}
	if a.IsLinkLocalUnicast() || a.IsUnspecified() {
		return netip.Addr{}, fmt.Errorf("GID %v is not the peer's IP address: pick the RoCE v2 GID of its IPv4 address (index 3, e.g. ibv_rc_pingpong -g 3, perftest -x 3)", a)
	}
	return a, nil
}
