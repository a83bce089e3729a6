package rdmacomm

import (
	"errors"
	"fmt"

	"github.com/rocelab/rocelab/core/seqtab"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/collective"
)

// Channel is one QP speaking the package's write protocol (the package
// doc: an offset announcement, then the data): the writes it posted that
// await completion, and the offset its peer announced last. The Transport
// keeps one per QP; so does the emulation node's collective job, whose
// QPs are connected through the node API instead.
type Channel struct {
	qp       *endpoint.QP
	nextID   uint32
	pending  seqtab.Table[pendingWrite] // by write ID
	announce bool                       // receive side: an offset was announced
	off      uint32                     // receive side: the announced offset
}

type pendingWrite struct {
	mr   *endpoint.MR // registered source to deregister, or nil
	done func(error)
}

// NewChannel returns a channel over qp.
func NewChannel(qp *endpoint.QP) Channel {
	return Channel{qp: qp}
}

// Pending returns the number of writes posted and not completed.
func (c *Channel) Pending() int { return c.pending.Len() }

// Write posts w toward the peer's region at raddr under rkey: the
// announcement of w.Off, then w.Len bytes to raddr+w.Off carrying w.Imm.
// The source is w.Src registered on pd for the write's life, or null (a
// payload-free region) when w.Src is nil or empty. done runs on the data's
// completion (SendDone); on an error nothing stays posted or registered.
// The caller checks w against the region.
func (c *Channel) Write(w collective.Write, pd *endpoint.PD, null *endpoint.MR, raddr uint64, rkey uint32, done func(error)) error {
	src, reg := null, (*endpoint.MR)(nil)
	if w.Src != nil && w.Len > 0 {
		mr, err := pd.RegMR(w.Src[:w.Len], 0)
		if err != nil {
			return fmt.Errorf("register source: %w", err)
		}
		src, reg = mr, mr
	}
	c.nextID = (c.nextID + 1) & seqtab.Mask
	id := c.nextID
	c.pending.Put(id, pendingWrite{mr: reg, done: done})
	err := c.qp.PostSend(endpoint.SendWR{WRID: uint64(id) << 1, Opcode: endpoint.WRWriteImm,
		RemoteAddr: raddr, RKey: rkey, Imm: uint32(w.Off)})
	if err == nil {
		err = c.qp.PostSend(endpoint.SendWR{WRID: uint64(id)<<1 | 1, Opcode: endpoint.WRWriteImm, Signaled: true,
			Local:      endpoint.SGE{Addr: src.Addr, Length: uint32(w.Len), LKey: src.LKey},
			RemoteAddr: raddr + uint64(w.Off), RKey: rkey, Imm: w.Imm})
	}
	if err != nil {
		c.pending.Delete(id)
		if reg != nil {
			reg.Dereg()
		}
		return fmt.Errorf("post write %d→%d: %w", w.From, w.To, err)
	}
	return nil
}

// errNotDone marks a write whose announcement failed.
var errNotDone = errors.New("offset announcement failed")

// SendDone handles a send completion of the channel's QP, rank from's
// toward rank to: a write is done on its data WR's completion, or failed
// when either WR completes with any status but success. Then its source
// is deregistered and its done runs.
func (c *Channel) SendDone(wc endpoint.WC, from, to int) {
	id := uint32(wc.WRID>>1) & seqtab.Mask
	pw, ok := c.pending.Get(id)
	if !ok {
		return
	}
	var err error
	if wc.Status != endpoint.StatusSuccess {
		err = fmt.Errorf("rank %d→%d: %v: %w", from, to, wc.Status, errOr(wc.Err))
	} else if wc.WRID&1 == 0 {
		return // a successful announcement (SignalAll)
	}
	c.pending.Delete(id)
	if pw.mr != nil {
		pw.mr.Dereg()
	}
	pw.done(err)
}

func errOr(err error) error {
	if err == nil {
		return errNotDone
	}
	return err
}

// RecvDone handles a receive completion of the channel's QP: it reposts
// the receive and pairs announcements with data. On the data's completion
// it returns the arrival: the announced offset, the length and the
// immediate, with ok true. A failed receive (the QP flushed) is ignored:
// the writer's completion reports the failure.
func (c *Channel) RecvDone(wc endpoint.WC) (off, n int, imm uint32, ok bool) {
	if wc.Status != endpoint.StatusSuccess {
		return 0, 0, 0, false
	}
	_ = c.qp.PostRecv(endpoint.RecvWR{})
	if !c.announce {
		c.announce, c.off = true, wc.Imm
		return 0, 0, 0, false
	}
	c.announce = false
	return int(c.off), int(wc.ByteLen), wc.Imm, true
}
