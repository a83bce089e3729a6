package endpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/wire"
)

// RC atomics (docs/metaroce-spec.md §12): CmpSwap and FetchAdd on an
// aligned 8-byte word of a region with remote-atomic access, answered by an
// ATOMIC Acknowledge that carries the word's original value. The responder
// runs each atomic once: a duplicate request (a retransmission) gets the
// saved result again, as the InfiniBand specification requires. The word is
// in the responder's byte order and changed with the CPU's own atomic
// instructions, so a program's atomics on the same word (in its memory,
// which the NIC maps) and the NIC's do not tear. Atomics are RoCEv2 only:
// MetaRoCE does not carry them (a known gap, §10).

var (
	errMisaligned = errors.New("atomic address not 8-byte aligned")
	errAtomicSize = errors.New("an atomic's local buffer must be 8 bytes")
	errAtomicMeta = errors.New("atomics are not supported in MetaRoCE mode (RoCEv2 only)")
)

// isAtomic reports whether op is an atomic request.
func isAtomic(op wire.Opcode) bool { return op == wire.OpCompareSwap || op == wire.OpFetchAdd }

// checkAtomic validates an atomic WR at post time.
func (r *requester) checkAtomic(wr SendWR) error {
	qp := r.qp
	if qp.cfg.Mode == ModeMetaRoCE {
		return fmt.Errorf("qp %#x: post send: %w", qp.qpn, errAtomicMeta)
	}
	if wr.Local.Length != 8 || len(wr.More) > 0 {
		return fmt.Errorf("qp %#x: post send: %w (have %d bytes in %d entries)", qp.qpn, errAtomicSize,
			sgTotal(wr.Local, wr.More), 1+len(wr.More))
	}
	return nil
}

func sgTotal(first SGE, more []SGE) uint64 {
	n := uint64(first.Length)
	for _, e := range more {
		n += uint64(e.Length)
	}
	return n
}

// buildAtomic builds w's request packet at seq.
func (r *requester) buildAtomic(w *swqe, seq uint64, sport uint16) *wire.Packet {
	qp := r.qp
	n := qp.nic
	op := wire.OpFetchAdd
	if w.wr.Opcode == WRAtomicCmpSwp {
		op = wire.OpCompareSwap
	}
	p := qp.header(op, n.opts.DataDSCP, true, sport, uint32(seq))
	p.VA, p.RKey, p.DMALen = w.wr.RemoteAddr, w.wr.RKey, 8
	p.SetAtomicETH(w.wr.SwapAdd, w.wr.Compare)
	p.AckReq = true
	return n.finish(p, n.opts.Raw, nil, nil, 0)
}

// atomicOriginal is an ATOMIC Acknowledge's original value as the bytes the
// requester places in its local buffer (its own byte order).
func atomicOriginal(p *wire.Packet) []byte {
	return binary.NativeEndian.AppendUint64(make([]byte, 0, 8), p.AtomicAck())
}

// onAtomicRequest takes an atomic request: the responder runs it in
// RoCEv2 mode; a MetaRoCE QP does not carry atomics and drops it.
func (qp *QP) onAtomicRequest(p *wire.Packet, op wire.Opcode, trimmed bool) {
	if qp.mode == ModeMetaRoCE {
		qp.ctr.rxDropped++
		return
	}
	qp.rsp.onRequest(p, op, trimmed)
}

// execAtomic checks and runs an in-order atomic request and queues its
// acknowledge behind the READ responses already queued.
func (s *responder) execAtomic(p *wire.Packet, op wire.Opcode, seq uint64) bool {
	qp := s.qp
	if p.VA%8 != 0 {
		s.nak(seq, wire.SyndromeNAKInvalidRequest, fmt.Errorf("PSN %#x: %#x: %w", p.PSN, p.VA, errMisaligned))
		return false
	}
	need := AccessRemoteAtomic
	if qp.nic.mut(MutAtomicNoAccessCheck) {
		need = 0
	}
	mr, err := qp.nic.lookup(p.RKey, true, qp.pd, p.VA, 8, need)
	if err != nil {
		s.nak(seq, accessSyndrome(err), err)
		return false
	}
	swap, cmp := p.AtomicETH()
	orig := runAtomic(mr.slice(p.VA, 8), op, swap, cmp)
	s.atomics.save(seq, orig)
	s.queueAtomicAck(seq, orig)
	return true
}

// replayAtomic answers a duplicate atomic request with the result saved
// when it ran; one too old to be saved is NAKed as an invalid request.
func (s *responder) replayAtomic(p *wire.Packet, seq uint64) {
	qp := s.qp
	if qp.nic.mut(MutAtomicReexecute) {
		if mr, err := qp.nic.lookup(p.RKey, true, qp.pd, p.VA, 8, 0); err == nil && p.VA%8 == 0 {
			swap, cmp := p.AtomicETH()
			s.queueAtomicAck(seq, runAtomic(mr.slice(p.VA, 8), wire.Opcode(p.Opcode), swap, cmp))
		}
		return
	}
	orig, ok := s.atomics.find(seq)
	if !ok {
		s.nak(seq, wire.SyndromeNAKInvalidRequest, fmt.Errorf("PSN %#x: duplicate atomic older than the last %d", p.PSN, len(s.atomics.seq)))
		return
	}
	s.dropReadsFrom(seq)
	s.queueAtomicAck(seq, orig)
}

func (s *responder) queueAtomicAck(seq uint64, orig uint64) {
	qp := s.qp
	pi := 0
	if len(qp.req.paths) > 1 {
		pi = int(seq % uint64(len(qp.req.paths)))
	}
	s.reads = append(s.reads, readJob{seq: seq, n: 1, length: 8, path: pi, atomic: true, orig: orig})
	qp.nic.activate(qp)
}

// pullAtomicAck sends the ATOMIC Acknowledge j, the head of the queue.
func (s *responder) pullAtomicAck(j *readJob, pa *path, now clock.Time) *wire.Packet {
	qp := s.qp
	n := qp.nic
	// In the READ responses' class: it must not overtake them.
	p := qp.header(wire.OpAtomicAcknowledge, n.opts.DataDSCP, true, pa.port, uint32(j.seq))
	p.Syndrome, p.MSN = wire.SyndromeACK(0x1F), s.msn&psnMask
	p.SetAtomicAck(j.orig)
	p = n.finish(p, n.opts.Raw, nil, nil, 0)
	pa.next = max(pa.next, now).Add(pa.cc.Rate().Serialize(wire.OnWireBytes(p.Len)))
	s.reads[0] = readJob{}
	s.reads = s.reads[1:]
	if len(s.reads) == 0 && s.ackAfterReads {
		s.ackAfterReads = false
		s.sendAck(s.ePSN-1, wire.SyndromeACK(0x1F))
	}
	qp.ctr.txPkts++
	qp.ctr.txBytes += int64(p.Len)
	return p
}

// runAtomic runs op on the 8-byte word b (nil for a payload-free region:
// nothing to change, the original reads as 0) and returns its original
// value.
func runAtomic(b []byte, op wire.Opcode, swapAdd, compare uint64) uint64 {
	if len(b) < 8 {
		return 0
	}
	if uintptr(unsafe.Pointer(&b[0]))%8 != 0 {
		// Not aligned in this process (a test's buffer): no other
		// party can race with it, plain reads and writes do.
		orig := binary.NativeEndian.Uint64(b)
		if op == wire.OpFetchAdd {
			binary.NativeEndian.PutUint64(b, orig+swapAdd)
		} else if orig == compare {
			binary.NativeEndian.PutUint64(b, swapAdd)
		}
		return orig
	}
	w := (*uint64)(unsafe.Pointer(&b[0]))
	if op == wire.OpFetchAdd {
		return atomic.AddUint64(w, swapAdd) - swapAdd
	}
	for {
		old := atomic.LoadUint64(w)
		if old != compare || atomic.CompareAndSwapUint64(w, old, swapAdd) {
			return old
		}
	}
}

// atomicLog keeps the results of a responder's last atomics by sequence
// number, enough for every atomic a requester may have outstanding
// (MaxDestRdAtomic in verbs terms).
type atomicLog struct {
	seq  [16]uint64
	orig [16]uint64
	next int
}

func (l *atomicLog) save(seq, orig uint64) {
	l.seq[l.next], l.orig[l.next] = seq, orig
	l.next = (l.next + 1) % len(l.seq)
}

func (l *atomicLog) find(seq uint64) (uint64, bool) {
	for i, s := range l.seq {
		if s == seq && s != 0 {
			return l.orig[i], true
		}
	}
	return 0, false
}
