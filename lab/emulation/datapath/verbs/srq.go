package verbs

import (
	"context"

	"github.com/rocelab/rocelab/endpoint"
)

// sharedRQ is a program's shared receive queue: an endpoint.SRQ of its
// NIC, and the PD it was created in.
type sharedRQ struct {
	srq *endpoint.SRQ
	pd  uint32
}

// maxSRQWR bounds an SRQ as a QP's receive queue is bounded.
const maxSRQWR = maxQPWR

func (c *conn) createSRQ(ctx context.Context, body []byte) ([]byte, error) {
	if len(body) < createSRQSize {
		return nil, fail(ePROTO, "create SRQ: short body")
	}
	pd, maxWR, limit := le.Uint32(body), le.Uint32(body[4:]), le.Uint32(body[8:])
	if maxWR == 0 || maxWR > maxSRQWR || limit > maxWR {
		return nil, fail(eINVAL, "create SRQ: %d WRs, limit %d (1 … %d WRs, a limit at most that)", maxWR, limit, maxSRQWR)
	}
	var out []byte
	err := c.do(ctx, func() error {
		p := c.pds[pd]
		if p == nil {
			return fail(eINVAL, "create SRQ: no PD %d", pd)
		}
		srq, err := p.CreateSRQ(endpoint.SRQConfig{MaxWR: int(maxWR), Limit: int(limit)})
		if err != nil {
			return fail(eINVAL, "create SRQ: %v", err)
		}
		c.next++
		c.srqs[c.next] = &sharedRQ{srq: srq, pd: pd}
		out = make([]byte, 8)
		le.PutUint32(out, c.next)
		return nil
	})
	return out, err
}

func (c *conn) modifySRQ(ctx context.Context, h uint32, body []byte) error {
	if len(body) < modifySRQSize {
		return fail(ePROTO, "modify SRQ: short body")
	}
	mask, maxWR, limit := le.Uint32(body), le.Uint32(body[4:]), le.Uint32(body[8:])
	if mask&^uint32(srqMaxWR|srqLimit) != 0 {
		return fail(eINVAL, "modify SRQ: attribute mask %#x (max_wr and srq_limit only)", mask)
	}
	return c.do(ctx, func() error {
		s := c.srqs[h]
		if s == nil {
			return fail(eINVAL, "no SRQ %d", h)
		}
		if mask&srqMaxWR != 0 {
			// IBV_SRQ_RESIZE: devices that cannot say so; the model can.
			if maxWR > maxSRQWR {
				return fail(eINVAL, "modify SRQ: %d WRs (at most %d)", maxWR, maxSRQWR)
			}
			if err := s.srq.Resize(int(maxWR)); err != nil {
				return fail(eINVAL, "modify SRQ: %v", err)
			}
		}
		if mask&srqLimit != 0 {
			if err := s.srq.SetLimit(int(limit)); err != nil {
				return fail(eINVAL, "modify SRQ: %v", err)
			}
		}
		return nil
	})
}

func (c *conn) querySRQ(ctx context.Context, h uint32) ([]byte, error) {
	out := make([]byte, 16)
	err := c.do(ctx, func() error {
		s := c.srqs[h]
		if s == nil {
			return fail(eINVAL, "no SRQ %d", h)
		}
		le.PutUint32(out, uint32(s.srq.MaxWR()))
		le.PutUint32(out[4:], uint32(s.srq.Limit()))
		le.PutUint32(out[8:], uint32(s.srq.Len()))
		return nil
	})
	return out, err
}

func (c *conn) destroySRQ(ctx context.Context, h uint32) error {
	return c.do(ctx, func() error {
		s := c.srqs[h]
		if s == nil {
			return fail(eINVAL, "no SRQ %d", h)
		}
		if err := s.srq.Destroy(); err != nil {
			return fail(eBUSY, "destroy SRQ %d: %v", h, err)
		}
		delete(c.srqs, h)
		return nil
	})
}

// postSRQRecv queues receive WRs on an SRQ. A WR the model refuses (a bad
// lkey) has no QP to complete on: the program hears of it only with
// ROCELAB_VERBS_DEBUG, as the library checks what it can first.
func (c *conn) postSRQRecv(h uint32, body []byte) {
	c.postRecvWRs(body, func(wr endpoint.RecvWR) {
		s := c.srqs[h]
		if s == nil {
			return
		}
		if err := s.srq.PostRecv(wr); err != nil {
			c.s.opts.Log.Debug("verbs post SRQ recv refused", "srq", h, "err", err)
		}
	})
}
