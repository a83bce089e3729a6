package verbs

import (
	"context"

	"github.com/rocelab/rocelab/endpoint/connmgr"
	"github.com/rocelab/rocelab/wire/cm"
)

// handleCM serves an RL_OP_CM_* request; ok is false for another op.
func (c *conn) handleCM(ctx context.Context, op, h uint32, body []byte, fds []int) (reply []byte, err error, ok bool) {
	need := func(n int) error {
		if len(body) < n {
			return fail(ePROTO, "rdma_cm request %d: %d bytes, want %d", op, len(body), n)
		}
		return nil
	}
	switch op {
	case opCMChannel:
		reply, err = c.openChannel(fds)
	case opCMDestroyChannel:
		err = c.cmDo(ctx, func() error { return c.closeChannel(h) })
	case opCMCreateID:
		if err = need(cmCreateIDSize); err == nil {
			reply, err = c.createID(ctx, le.Uint32(body), uint16(le.Uint32(body[4:])), le.Uint32(body[8:]))
		}
	case opCMDestroyID:
		err = c.cmDo(ctx, func() error { return c.withID(h, c.destroyID) })
	case opCMBind:
		if err = need(cmAddrSize); err == nil {
			a := getCMAddr(body)
			err = c.cmDo(ctx, func() error {
				return c.withID(h, func(id *cmID) error {
					if err := c.bind(id, a); err != nil {
						return err
					}
					reply = id.boundReply()
					return nil
				})
			})
		}
	case opCMResolveAddr:
		if err = need(cmResolveSize); err == nil {
			src, dst := getCMAddr(body), getCMAddr(body[cmAddrSize:])
			err = c.cmDo(ctx, func() error {
				return c.withID(h, func(id *cmID) error {
					var rerr error
					reply, rerr = c.resolveAddr(id, src, dst)
					return rerr
				})
			})
		}
	case opCMResolveRoute:
		err = c.cmDo(ctx, func() error {
			return c.withID(h, func(id *cmID) error {
				if !id.resolved {
					return fail(eINVAL, "resolve route: the address is not resolved")
				}
				c.s.post(id, id.event(evRouteResolved, 0, cmConnParams{}))
				return nil
			})
		})
	case opCMListen:
		err = c.cmDo(ctx, func() error { return c.withID(h, c.listen) })
	case opCMConnect, opCMAccept, opCMReject:
		if err = need(cmConnSize); err == nil {
			p := getCMConn(body)
			err = c.cmDo(ctx, func() error {
				return c.withID(h, func(id *cmID) error {
					switch op {
					case opCMConnect:
						return c.connect(id, p)
					case opCMAccept:
						return c.accept(id, p)
					}
					return c.reject(id, p)
				})
			})
		}
	case opCMEstablish:
		err = c.cmDo(ctx, func() error {
			return c.withID(h, func(id *cmID) error {
				if id.conv == nil {
					return fail(eINVAL, "establish: no connection")
				}
				if err := c.s.cm.mgrs[id.conv.nic].Confirm(id.conv.id); err != nil {
					return fail(eINVAL, "establish: %v", err)
				}
				return nil
			})
		})
	case opCMDisconnect:
		err = c.cmDo(ctx, func() error {
			return c.withID(h, func(id *cmID) error {
				if id.conv == nil {
					return fail(eNOTCONN, "disconnect: not connected")
				}
				if err := c.s.cm.mgrs[id.conv.nic].Disconnect(id.conv.id); err != nil {
					return fail(eNOTCONN, "disconnect: %v", err)
				}
				return nil
			})
		})
	case opCMMigrate:
		if err = need(cmCreateIDSize); err == nil {
			err = c.cmDo(ctx, func() error {
				ch := c.channels[le.Uint32(body)]
				if ch == nil || ch.closed {
					return fail(eINVAL, "migrate: no event channel %d", le.Uint32(body))
				}
				return c.withID(h, func(id *cmID) error { id.ch = ch; return nil })
			})
		}
	default:
		return nil, nil, false
	}
	return reply, err, true
}

func (c *conn) withID(h uint32, f func(*cmID) error) error {
	id := c.s.cm.ids[h]
	if id == nil || id.owner != c {
		return fail(eINVAL, "no rdma_cm id %d", h)
	}
	return f(id)
}

func (c *conn) createID(ctx context.Context, channel uint32, ps uint16, qpType uint32) ([]byte, error) {
	var h uint32
	err := c.cmDo(ctx, func() error {
		ch := c.channels[channel]
		if ch == nil || ch.closed {
			return fail(eINVAL, "create id: no event channel %d", channel)
		}
		switch ps {
		case psTCP, psIB, psUDP:
		default:
			return fail(eOPNOTSUPP, "create id: port space %#x is not supported (RDMA_PS_TCP, RDMA_PS_UDP and RDMA_PS_IB are)", ps)
		}
		c.s.cm.next++
		h = c.s.cm.next
		c.s.cm.ids[h] = &cmID{h: h, owner: c, ch: ch, ps: ps, ud: ps == psUDP || qpType == qptUD, nic: -1}
		return nil
	})
	return handle32(h), err
}

// closeChannel forgets channel h. Its socket stays open until the
// connection ends: a thread of the program may still wait on it, as one
// waits on a closed rdma_cm channel of the kernel's until the program
// exits, and must not wake to a node that seems gone.
func (c *conn) closeChannel(h uint32) error {
	ch := c.channels[h]
	if ch == nil || ch.closed {
		return fail(eINVAL, "no event channel %d", h)
	}
	for _, id := range c.s.cm.ids {
		if id.ch == ch {
			return fail(eBUSY, "event channel %d still has rdma_cm ids", h)
		}
	}
	ch.closed = true
	return nil
}

// destroyID ends what id has in the NICs' CMs (a connection is
// disconnected, a request rejected) and forgets it.
func (c *conn) destroyID(id *cmID) error {
	if id.conv != nil {
		c.s.cm.mgrs[id.conv.nic].Close(id.conv.id)
		delete(c.s.cm.convs, *id.conv)
		id.conv = nil
	}
	for _, k := range id.listens {
		c.s.cm.mgrs[k.nic].Unlisten(k.service)
		delete(c.s.cm.listeners, k)
	}
	delete(c.s.cm.ids, id.h)
	return nil
}

// boundReply is the rl_cm_bound of id.
func (id *cmID) boundReply() []byte {
	b := make([]byte, cmBoundSize)
	le.PutUint32(b, uint32(int32(id.nic)))
	putCMAddr(b[8:], id.local)
	putCMAddr(b[8+cmAddrSize:], id.remote)
	return b
}

// bind gives id its local address: a NIC's (that NIC), any or another
// address of this host (every NIC), and a port (a free one for 0).
func (c *conn) bind(id *cmID, a cmAddr) error {
	if id.bound {
		return fail(eINVAL, "bind: already bound")
	}
	nic := -1
	if a.ip.IsValid() && !c.s.isSelf(a.ip) {
		if nic = c.s.nicByIP(a.ip); nic < 0 {
			return fail(eADDRNOTAVAIL, "bind: %v is no address of this host's RDMA NICs", a.ip)
		}
	}
	if a.port == 0 {
		a.port = c.s.freePort()
	}
	if a.family == 0 {
		a.family = afINET
	}
	id.nic, id.local, id.bound = nic, a, true
	if nic >= 0 {
		id.local.ip = c.s.opts.NICs[nic].NIC.IP()
	}
	return nil
}

const (
	afINET  = 2
	afINET6 = 10
)

// freePort is a port no id of the node holds (loop goroutine).
func (s *Server) freePort() uint16 {
	for {
		p := s.cm.nextPort
		s.cm.nextPort++
		if s.cm.nextPort < 40000 {
			s.cm.nextPort = 40000
		}
		used := false
		for _, id := range s.cm.ids {
			used = used || id.bound && id.local.port == p
		}
		if !used {
			return p
		}
	}
}

// resolveAddr binds id (to src, or to the NIC that reaches dst) and
// finds the peer's NIC; ADDR_RESOLVED or ADDR_ERROR follows.
func (c *conn) resolveAddr(id *cmID, src, dst cmAddr) ([]byte, error) {
	if !dst.ip.IsValid() {
		return nil, fail(eINVAL, "resolve addr: no destination address")
	}
	if !id.bound {
		if err := c.bind(id, src); err != nil {
			return nil, err
		}
	}
	nic, peer, ok := c.s.resolve(id.nic, dst.ip)
	if !ok || nic < 0 {
		c.s.post(id, id.event(evAddrError, -eHOSTUNREACH, cmConnParams{}))
		return id.boundReply(), nil
	}
	id.nic, id.resolved = nic, true
	id.local.ip = c.s.opts.NICs[nic].NIC.IP()
	id.remote = cmAddr{ip: peer, port: dst.port, family: dst.family}
	c.s.post(id, id.event(evAddrResolved, 0, cmConnParams{}))
	return id.boundReply(), nil
}

// listen registers id's service ID with its NIC's CM, or every NIC's.
func (c *conn) listen(id *cmID) error {
	if !id.bound {
		if err := c.bind(id, cmAddr{}); err != nil {
			return err
		}
	}
	if len(id.listens) > 0 {
		return nil // listening already: a new backlog
	}
	svc := cm.ServiceID(id.ps, id.local.port)
	nics := []int{id.nic}
	if id.nic < 0 {
		nics = nics[:0]
		for i := range c.s.opts.NICs {
			nics = append(nics, i)
		}
	}
	for _, n := range nics {
		k := cmListenKey{n, svc}
		if err := c.s.manager(n).Listen(svc); err != nil {
			for _, k := range id.listens {
				c.s.cm.mgrs[k.nic].Unlisten(k.service)
				delete(c.s.cm.listeners, k)
			}
			id.listens = nil
			return fail(eADDRINUSE, "listen on port %d: another rdma_cm id listens there", id.local.port)
		}
		c.s.cm.listeners[k] = id
		id.listens = append(id.listens, k)
	}
	return nil
}

// connect sends the REQ (or SIDR_REQ) of id, whose route is resolved.
func (c *conn) connect(id *cmID, p cmConnParams) error {
	if !id.resolved {
		return fail(eINVAL, "connect: the route is not resolved")
	}
	if id.conv != nil {
		return fail(eISCONN, "connect: already connecting or connected")
	}
	m := c.s.manager(id.nic)
	priv := cm.AppendIPPrivate(nil, cm.IPPrivate{SrcPort: id.local.port, Src: id.local.ip, Dst: id.remote.ip}, p.private)
	svc := cm.ServiceID(id.ps, id.remote.port)
	var conv uint32
	if id.ud {
		conv = m.Resolve(id.remote.ip, connmgr.Params{ServiceID: svc, Private: priv})
	} else {
		mtu := p.mtu
		if mtu == 0 {
			mtu = mtuEnum(c.s.opts.NICs[id.nic].MTU)
		}
		conv = m.Connect(id.remote.ip, connmgr.Params{ServiceID: svc, QPN: p.qpn, PSN: p.psn, ResponderResources: p.responder,
			InitiatorDepth: p.initiator, RetryCount: p.retry, RNRRetryCount: p.rnr, PathMTU: mtu, Private: priv})
	}
	k := cmConvKey{id.nic, conv}
	id.conv = &k
	c.s.cm.convs[k] = id
	return nil
}

// mtuEnum is the IBTA MTU code (enum ibv_mtu: 1 is 256 bytes, 5 is 4096)
// of the largest MTU that fits payload bytes.
func mtuEnum(payload int) uint8 {
	code := uint8(1)
	for m := 256; m*2 <= payload && code < 5; m *= 2 {
		code++
	}
	return code
}

func (c *conn) accept(id *cmID, p cmConnParams) error {
	if id.conv == nil {
		return fail(eINVAL, "accept: no connection request")
	}
	m := c.s.cm.mgrs[id.conv.nic]
	params := connmgr.Params{QPN: p.qpn, PSN: p.psn, QKey: p.qkey, ResponderResources: p.responder, InitiatorDepth: p.initiator,
		RetryCount: p.retry, RNRRetryCount: p.rnr, Private: p.private}
	if id.ud && params.QKey == 0 {
		params.QKey = udpQKey
	}
	if err := m.Accept(id.conv.id, params); err != nil {
		return fail(eINVAL, "accept: %v", err)
	}
	if id.ud { // a SIDR_REP ends the conversation
		delete(c.s.cm.convs, *id.conv)
		id.conv = nil
	}
	return nil
}

func (c *conn) reject(id *cmID, p cmConnParams) error {
	if id.conv == nil {
		return fail(eINVAL, "reject: no connection request")
	}
	if err := c.s.cm.mgrs[id.conv.nic].Reject(id.conv.id, p.private); err != nil {
		return fail(eINVAL, "reject: %v", err)
	}
	delete(c.s.cm.convs, *id.conv)
	id.conv = nil
	return nil
}

// cmEvent takes an event of NIC nic's CM (loop goroutine) to the
// program whose id it concerns.
func (s *Server) cmEvent(nic int, e connmgr.Event) {
	k := cmConvKey{nic, e.ID}
	if e.Kind == connmgr.ConnectRequest {
		s.connectRequest(nic, e)
		return
	}
	id := s.cm.convs[k]
	if id == nil {
		return
	}
	p := cmConnParams{qpn: e.Remote.QPN, psn: e.Remote.PSN, qkey: e.Remote.QKey, responder: e.Remote.ResponderResources,
		initiator: e.Remote.InitiatorDepth, retry: e.Remote.RetryCount, rnr: e.Remote.RNRRetryCount, private: e.Remote.Private}
	switch e.Kind {
	case connmgr.Replied:
		// The program readies its QP, then establishes: ask the
		// peer to wait, as rdma_cm does.
		s.cm.mgrs[nic].Delay(e.ID, cmMRATimeout)
		s.post(id, id.event(evConnectResponse, 0, p))
		return
	case connmgr.Established:
		if id.ud {
			if p.qkey == 0 {
				p.qkey = udpQKey
			}
			s.forget(id)
		}
		s.post(id, id.event(evEstablished, 0, p))
		return
	case connmgr.Rejected:
		s.forget(id)
		if id.ud { // rdma_cm reports a refused SIDR as unreachable
			s.post(id, id.event(evUnreachable, -eCONNREFUSED, p))
			return
		}
		s.post(id, id.event(evRejected, int32(e.Reason), p))
	case connmgr.Unreachable:
		s.forget(id)
		s.post(id, id.event(evUnreachable, -eTIMEDOUT, p))
	case connmgr.Disconnected:
		s.forget(id)
		s.post(id, id.event(evDisconnected, 0, p))
	}
}

func (s *Server) forget(id *cmID) {
	if id.conv != nil {
		delete(s.cm.convs, *id.conv)
		id.conv = nil
	}
}

// connectRequest gives a request to the id that listens for its service:
// a new id, on the listener's channel.
func (s *Server) connectRequest(nic int, e connmgr.Event) {
	l := s.cm.listeners[cmListenKey{nic, e.Remote.ServiceID}]
	var hdr cm.IPPrivate
	consumer, err := cm.DecodeIPPrivate(e.Remote.Private, &hdr)
	if l == nil || err != nil {
		s.cm.mgrs[nic].Reject(e.ID, nil)
		return
	}
	s.cm.next++
	id := &cmID{h: s.cm.next, owner: l.owner, ch: l.ch, ps: l.ps, ud: l.ud, nic: nic, bound: true, resolved: true,
		local:  cmAddr{ip: s.opts.NICs[nic].NIC.IP(), port: l.local.port, family: l.local.family},
		remote: cmAddr{ip: e.Peer, port: hdr.SrcPort, family: l.local.family}}
	k := cmConvKey{nic, e.ID}
	id.conv = &k
	s.cm.ids[id.h] = id
	s.cm.convs[k] = id
	if !id.ud {
		s.cm.mgrs[nic].Delay(e.ID, cmMRATimeout)
	}
	p := cmConnParams{qpn: e.Remote.QPN, psn: e.Remote.PSN, responder: e.Remote.ResponderResources, initiator: e.Remote.InitiatorDepth,
		retry: e.Remote.RetryCount, rnr: e.Remote.RNRRetryCount, mtu: e.Remote.PathMTU, private: consumer}
	ev := id.event(evConnectRequest, 0, p)
	le.PutUint32(ev[12:], l.h)
	s.post(id, ev)
}

// releaseCM ends every id and channel of connection c (loop goroutine).
func (c *conn) releaseCM() {
	for _, id := range c.s.cm.ids {
		if id.owner == c {
			c.destroyID(id)
		}
	}
	for h, ch := range c.channels {
		delete(c.channels, h)
		close(ch.out)
	}
}
