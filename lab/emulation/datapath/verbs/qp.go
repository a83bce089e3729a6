package verbs

import (
	"context"
	"fmt"

	"github.com/rocelab/rocelab/endpoint"
)

func (c *conn) createQP(ctx context.Context, body []byte) ([]byte, error) {
	if len(body) < createQPSize {
		return nil, fail(ePROTO, "create QP: short body")
	}
	f := func(i int) uint32 { return le.Uint32(body[4*i:]) }
	pd, scq, rcq, maxSend, maxRecv, maxInl, sigAll, srqH, qpType := f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7), f(8)
	if qpType != qptRC && qpType != qptUD {
		return nil, fail(eOPNOTSUPP, "create QP: type %d (RC and UD only)", qpType)
	}
	if maxSend > maxQPWR || maxRecv > maxQPWR || maxInl > maxInline {
		return nil, fail(eINVAL, "create QP: %d send WRs, %d receive WRs, %d inline bytes (at most %d, %d, %d)",
			maxSend, maxRecv, maxInl, maxQPWR, maxQPWR, maxInline)
	}
	var out []byte
	err := c.do(ctx, func() error {
		p, sq, rq := c.pds[pd], c.cqs[scq], c.cqs[rcq]
		if p == nil || sq == nil || rq == nil {
			return fail(eINVAL, "create QP: no PD %d or CQ %d/%d", pd, scq, rcq)
		}
		used := c.s.qps[c.nic]
		if c.s.opts.Used != nil {
			used += c.s.opts.Used(c.nic)
		}
		if c.s.opts.MaxQPs > 0 && used >= c.s.opts.MaxQPs {
			return fail(eNOMEM, "NIC %s has %d QPs, its limit", c.s.opts.NICs[c.nic].Name, used)
		}
		var srq *sharedRQ
		if srqH != 0 {
			if srq = c.srqs[srqH]; srq == nil {
				return fail(eINVAL, "create QP: no SRQ %d", srqH)
			}
		}
		// The model's queues get room for twice what the program asked
		// (unsignaled WRs leave the program's count before the model's).
		cfg := endpoint.QPConfig{SendCQ: sq.cq, RecvCQ: rq.cq, Mode: c.mode, CC: c.cc,
			MaxSendWR: 2 * int(max(maxSend, 1)), MaxRecvWR: 2 * int(max(maxRecv, 1)), SignalAll: sigAll != 0}
		if srq != nil {
			cfg.SRQ = srq.srq
		}
		if qpType == qptUD {
			cfg.Type = endpoint.TypeUD
		}
		qp, err := p.CreateQP(cfg)
		if err != nil {
			return fail(eINVAL, "create QP: %v", err)
		}
		sq.refs++
		rq.refs++
		c.s.qps[c.nic]++
		c.next++
		c.qps[c.next] = &queuePair{qp: qp, pd: pd, send: scq, recv: rcq, maxInline: int(maxInl), maxSend: int(max(maxSend, 1))}
		out = make([]byte, 8)
		le.PutUint32(out, c.next)
		le.PutUint32(out[4:], qp.QPN())
		return nil
	})
	return out, err
}

func (c *conn) destroyQP(ctx context.Context, h uint32) error {
	return c.do(ctx, func() error {
		q := c.qps[h]
		if q == nil {
			return fail(eINVAL, "no QP %d", h)
		}
		q.qp.Destroy()
		c.cqs[q.send].refs--
		c.cqs[q.recv].refs--
		c.s.qps[c.nic]--
		delete(c.qps, h)
		return nil
	})
}

func (c *conn) queryQP(ctx context.Context, h uint32) ([]byte, error) {
	out := make([]byte, 8)
	err := c.do(ctx, func() error {
		q := c.qps[h]
		if q == nil {
			return fail(eINVAL, "no QP %d", h)
		}
		st := map[endpoint.State]uint32{endpoint.StateReset: qpsReset, endpoint.StateInit: qpsInit,
			endpoint.StateRTR: qpsRTR, endpoint.StateRTS: qpsRTS, endpoint.StateError: qpsErr}[q.qp.State()]
		le.PutUint32(out, st)
		return nil
	})
	return out, err
}

// modifyQP moves a QP through RESET → INIT → RTR → RTS (or to ERROR) with
// the attributes verbs give on the way.
func (c *conn) modifyQP(ctx context.Context, h uint32, m modifyQP) error {
	return c.do(ctx, func() error {
		q := c.qps[h]
		if q == nil {
			return fail(eINVAL, "no QP %d", h)
		}
		qp := q.qp
		if m.Mask&qpAttrState == 0 {
			return nil // attributes alone: nothing the model keeps
		}
		cur := qp.State()
		var err error
		switch {
		case m.State == qpsErr:
			qp.ToError()
		case m.State == qpsInit && cur == endpoint.StateReset:
			if m.Mask&qpAttrQKey != 0 {
				qp.SetQKey(m.QKey)
			}
			err = qp.ToInit()
		case qp.Type() == endpoint.TypeUD && m.State == qpsRTR && cur == endpoint.StateInit:
			err = qp.ToRTR(endpoint.ConnInfo{}) // a datagram QP has no peer
		case qp.Type() == endpoint.TypeUD && m.State == qpsRTS && cur == endpoint.StateRTR:
			err = qp.ToRTS()
		case m.State == qpsInit && cur == endpoint.StateInit:
			if m.Mask&qpAttrQKey != 0 {
				qp.SetQKey(m.QKey)
			}
		case m.State == qpsRTR && cur == endpoint.StateInit:
			err = c.toRTR(qp, m)
		case m.State == qpsRTS && cur == endpoint.StateRTR:
			if m.Mask&qpAttrSQPSN != 0 {
				if err = qp.SetSendPSN(m.SQPSN); err != nil {
					break
				}
			}
			retry, rnr := 7, 7
			if m.Mask&qpAttrRetry != 0 {
				retry = int(m.Retry)
			}
			if m.Mask&qpAttrRNR != 0 {
				rnr = int(m.RNRRetry)
			}
			if err = qp.SetRetry(retry, rnr); err == nil {
				err = qp.ToRTS()
			}
		case m.State == qpsRTS && cur == endpoint.StateRTS:
		default:
			return fail(eINVAL, "QP %#x: %s to state %d is not a transition rocelab models (RESET → INIT → RTR → RTS, any → ERR)", qp.QPN(), cur, m.State)
		}
		if err != nil {
			return fail(eINVAL, "QP %#x: %v", qp.QPN(), err)
		}
		return nil
	})
}

func (c *conn) toRTR(qp *endpoint.QP, m modifyQP) error {
	const need = qpAttrAV | qpAttrPathMTU | qpAttrDestQPN | qpAttrRQPSN
	if m.Mask&need != need {
		return fail(eINVAL, "QP %#x: RTR needs the address vector, path MTU, destination QP and receive PSN (mask %#x)", qp.QPN(), m.Mask)
	}
	ip, err := ipOfGID(m.DGID)
	if err != nil {
		return fail(eINVAL, "QP %#x: %v", qp.QPN(), err)
	}
	if m.MTU == 0 {
		return fail(eINVAL, "QP %#x: path MTU not one of 256 … 4096", qp.QPN())
	}
	remote := endpoint.ConnInfo{QPN: m.DestQPN, PSN: m.RQPSN, IP: ip, MTU: int(m.MTU), Mode: c.mode}
	if c.mode == endpoint.ModeMetaRoCE {
		// The peer's capabilities are not in what verbs programs exchange:
		// offer MetaRoCE and let the in-band negotiation decide.
		remote.Caps = qp.Info().Caps
	}
	if err := qp.ToRTR(remote); err != nil {
		return fail(eINVAL, "%v", err)
	}
	return nil
}

// inlineBuf holds the bytes of inline WRs in a region of the QP's own
// until they are sent: slots are reused round the ring, and the ring
// holds the program's whole send queue of them.
type inlineBuf struct {
	mr  *endpoint.MR
	buf []byte
	at  int
}

func (c *conn) inlineFor(q *queuePair) (*inlineBuf, error) {
	if q.inline != nil {
		return q.inline, nil
	}
	size := min(max(q.maxSend, 1)*max(q.maxInline, 64), 16<<20)
	buf := make([]byte, size)
	mr, err := c.pds[q.pd].RegMR(buf, 0)
	if err != nil {
		return nil, err
	}
	q.inline = &inlineBuf{mr: mr, buf: buf}
	return q.inline, nil
}

func (b *inlineBuf) put(data []byte) endpoint.SGE {
	if b.at+len(data) > len(b.buf) {
		b.at = 0
	}
	copy(b.buf[b.at:], data)
	sge := endpoint.SGE{Addr: b.mr.Addr + uint64(b.at), Length: uint32(len(data)), LKey: b.mr.LKey}
	b.at += len(data)
	return sge
}

var sendOpcode = map[uint8]endpoint.WROpcode{
	0: endpoint.WRWrite, 1: endpoint.WRWriteImm, 2: endpoint.WRSend, 3: endpoint.WRSendImm, 4: endpoint.WRRead,
	5: endpoint.WRAtomicCmpSwp, 6: endpoint.WRAtomicFetchAdd,
}

// postSend queues the WRs of one POST_SEND on the loop. A WR the model
// refuses completes at once (refused).
func (c *conn) postSend(h uint32, body []byte) {
	wrs, rest, ok := readWRs(body, sendWRSize, readSendWR)
	if !ok {
		return
	}
	inl := append([]byte(nil), rest...)
	c.s.opts.Loop.Post(func() {
		q := c.qps[h]
		if q == nil {
			return
		}
		at := 0
		for _, w := range wrs {
			op, ok := sendOpcode[w.Opcode]
			wr := endpoint.SendWR{WRID: w.WRID, Opcode: op, RemoteAddr: w.RemoteAddr, RKey: w.RKey,
				Imm: swap32(w.Imm), Signaled: w.Flags&wrSignaled != 0,
				Local: endpoint.SGE{Addr: w.Addr, Length: w.Length, LKey: w.LKey}}
			var err error
			if w.Flags&wrUD != 0 {
				wr.UD, err = readUDDest(inl[min(at, len(inl)):])
				at += udDestSize
			}
			if w.Flags&wrAtomic != 0 && err == nil {
				err = readAtomic(&wr, inl[min(at, len(inl)):])
				at += atomicSize
			}
			switch {
			case err != nil:
			case !ok:
				err = fmt.Errorf("opcode %d is not supported", w.Opcode)
			case w.Flags&wrInline != 0:
				end := at + int(w.InlineLen)
				if end > len(inl) {
					err = fmt.Errorf("inline data past the message")
					break
				}
				var b *inlineBuf
				if b, err = c.inlineFor(q); err == nil {
					wr.Local = b.put(inl[at:end])
				}
				at = end
			case w.Flags&wrSGL != 0:
				end := at + int(w.InlineLen)
				more, _, ok := readSGEs(inl[min(at, len(inl)):], int(w.InlineLen)/sgeSize)
				if !ok || end > len(inl) {
					err = fmt.Errorf("a scatter/gather list past the message or of more than %d entries", maxSGE)
					break
				}
				wr.More = more
				at = end
			}
			if err == nil {
				err = q.qp.PostSend(wr)
			}
			if err != nil {
				c.s.opts.Log.Debug("verbs post send refused", "qpn", q.qp.QPN(), "err", err)
				c.push(c.cqs[q.send], cqe{WRID: w.WRID, QPN: q.qp.QPN(), Status: refused(q.qp), Opcode: wcOpcode[endpoint.WCSend]})
			}
		}
		if c.pending.Load() {
			c.flushRings()
		}
	})
}

// refused is the status of a WR the model would not take: flushed on a QP
// in ERROR (as verbs complete WRs posted there), else a local QP
// operation error.
func refused(qp *endpoint.QP) uint8 {
	if qp.State() == endpoint.StateError {
		return wcStatus[endpoint.StatusFlush]
	}
	return wcLocQPOpErr
}

func (c *conn) postRecv(h uint32, body []byte) {
	c.postRecvWRs(body, func(wr endpoint.RecvWR) {
		q := c.qps[h]
		if q == nil {
			return
		}
		if err := q.qp.PostRecv(wr); err != nil {
			c.s.opts.Log.Debug("verbs post recv refused", "qpn", q.qp.QPN(), "err", err)
			c.push(c.cqs[q.recv], cqe{WRID: wr.WRID, QPN: q.qp.QPN(), Status: refused(q.qp), Opcode: wcOpcode[endpoint.WCRecv]})
		}
	})
}

// postRecvWRs reads a POST_RECV's or POST_SRQ_RECV's WRs and hands each,
// in order, to post on the loop.
func (c *conn) postRecvWRs(body []byte, post func(endpoint.RecvWR)) {
	wrs, more, ok := recvWRs(body)
	if !ok {
		return
	}
	c.s.opts.Loop.Post(func() {
		for i, w := range wrs {
			post(endpoint.RecvWR{WRID: w.WRID, Local: endpoint.SGE{Addr: w.Addr, Length: w.Length, LKey: w.LKey}, More: more[i]})
		}
	})
}

// recvWRs reads a POST_RECV's (or POST_SRQ_RECV's) WRs and each one's
// further scatter/gather entries.
func recvWRs(body []byte) (wrs []recvWR, more [][]endpoint.SGE, ok bool) {
	wrs, rest, ok := readWRs(body, recvWRSize, readRecvWR)
	if !ok {
		return nil, nil, false
	}
	more = make([][]endpoint.SGE, len(wrs))
	for i, w := range wrs {
		if w.NSGE > 0 {
			if more[i], rest, ok = readSGEs(rest, int(w.NSGE)); !ok {
				return nil, nil, false
			}
		}
	}
	return wrs, more, true
}

// readAtomic reads an atomic WR's struct rl_atomic into wr.
func readAtomic(wr *endpoint.SendWR, b []byte) error {
	if len(b) < atomicSize {
		return fmt.Errorf("an atomic's operands past the message")
	}
	compareAdd, swap := le.Uint64(b), le.Uint64(b[8:])
	if wr.Opcode == endpoint.WRAtomicCmpSwp {
		wr.Compare, wr.SwapAdd = compareAdd, swap
	} else {
		wr.SwapAdd = compareAdd
	}
	return nil
}

// readUDDest reads a UD WR's struct rl_ud_dest.
func readUDDest(b []byte) (*endpoint.UDDest, error) {
	if len(b) < udDestSize {
		return nil, fmt.Errorf("a UD destination past the message")
	}
	ip, err := ipOfGID([16]byte(b[:16]))
	if err != nil {
		return nil, fmt.Errorf("UD destination: %v", err)
	}
	return &endpoint.UDDest{IP: ip, QPN: le.Uint32(b[16:]) & 0xFFFFFF, QKey: le.Uint32(b[20:])}, nil
}
