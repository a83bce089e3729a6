package endpoint

import (
	"errors"
	"fmt"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/metaroce"
)

// rnrTimes is the InfiniBand RNR timer table: code → minimum RNR NAK delay
// in microseconds (code 0 is the longest, 655.36 ms).
var rnrTimes = [32]float64{655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280,
	1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840,
	245760, 327680, 491520}

// RNRDelay returns the delay an RNR NAK timer code asks for.
func RNRDelay(code uint8) clock.Duration { return clock.FromMicros(rnrTimes[code&0x1F]) }

// onAck handles an RC Acknowledge: an ACK (cumulative), a PSN sequence
// error NAK (go back), an RNR NAK (wait, then go back or resend) or an
// error NAK (fail the WR and the QP).
func (r *requester) onAck(p *wire.Packet) {
	qp := r.qp
	if qp.state != StateRTS {
		return
	}
	seq := r.qp.nic.unwrap(p.PSN, r.una)
	syn := p.Syndrome
	switch syn & 0x60 {
	case wire.SyndromeClassACK:
		qp.ctr.acksRx++
		if qp.mode == ModeMetaRoCE {
			r.onCumAck(seq)
			return
		}
		r.ackThrough(seq)
	case wire.SyndromeClassRNR:
		qp.ctr.rnrRx++
		if now := qp.nic.sched.Now(); now >= r.rnrUntil {
			r.rnrRetries++ // NAKs of one burst (one per packet sent) count once
		}
		if qp.cfg.RNRRetry != 7 && r.rnrRetries > qp.cfg.RNRRetry {
			r.ackThrough(seq - 1)
			r.failHead(StatusRNRRetryExceeded, errors.New("RNR retry counter exceeded"))
			return
		}
		r.rnrUntil = qp.nic.sched.Now().Add(RNRDelay(syn))
		if qp.nic.mut(MutIgnoreRNRTimer) {
			r.rnrUntil = qp.nic.sched.Now()
		}
		if qp.mode == ModeMetaRoCE {
			if seq >= r.una && seq < r.maxSent && !r.rec(seq).acked {
				r.markLost(seq, false)
			}
		} else {
			r.ackThrough(seq - 1)
			r.rewind(seq)
		}
		qp.nic.activate(qp)
	default:
		qp.ctr.naksRx++
		if syn&0x7F == wire.SyndromeNAKPSNSequence {
			if qp.mode == ModeMetaRoCE {
				r.onCumAck(seq - 1)
				return
			}
			r.ackThrough(seq - 1)
			if qp.nic.mut(MutGoBackSkipOne) {
				seq++
			}
			r.rewind(seq)
			return
		}
		st := StatusRemoteOperational
		code := syn & 0x7F
		if qp.nic.mut(MutWrongErrStatus) {
			code = 0
		}
		switch code {
		case wire.SyndromeNAKInvalidRequest:
			st = StatusRemoteInvalidRequest
		case wire.SyndromeNAKRemoteAccess:
			st = StatusRemoteAccess
		}
		err := fmt.Errorf("responder: %s at PSN %#x", wire.SyndromeString(syn), p.PSN)
		if i := r.find(seq); i >= 0 {
			// Everything before the faulty WR completed successfully.
			for range i {
				w := r.sq[0]
				r.sq = r.sq[1:]
				r.complete(w, StatusSuccess, nil)
			}
		}
		r.failHead(st, err)
	}
}

// onReadResponse places a READ response. Go-back-N takes responses in
// order only and re-requests from the first missing one; MetaRoCE places
// any response and re-requests the gaps it sees.
func (r *requester) onReadResponse(p *wire.Packet, base wire.Opcode, trimmed bool) {
	qp := r.qp
	if qp.state != StateRTS {
		return
	}
	seq := r.qp.nic.unwrap(p.PSN, r.una)
	i := r.find(seq)
	if i < 0 || !r.sq[i].wr.Opcode.readsBack() || seq < r.una {
		qp.ctr.dupPkts++
		return
	}
	w := r.sq[i]
	idx := int(seq - w.first)
	if trimmed {
		qp.ctr.trimsRx++
		if qp.mode == ModeMetaRoCE && !r.rec(seq).acked {
			r.markLost(seq, true)
			qp.nic.activate(qp)
		}
		return
	}
	data, ok := r.readPayload(p, wire.Opcode(p.Opcode) != base)
	if atomicAck := base == wire.OpAtomicAcknowledge; atomicAck != w.wr.Opcode.atomic() {
		ok = false // an ATOMIC Acknowledge for a READ, or a READ response for an atomic
	} else if atomicAck {
		data = atomicOriginal(p)
	}
	if !ok {
		qp.ctr.rxDropped++
		return
	}
	want := min(qp.mtu, int(w.wr.Local.Length)-idx*qp.mtu)
	if w.wr.Local.Length == 0 {
		want = 0
	}
	if int(p.PayloadLen) != want && (data == nil || len(data) != want) {
		qp.ctr.rxDropped++
		return
	}
	if qp.mode == ModeRoCEv2 {
		// Responses come in order: an earlier READ still missing responses
		// means this one is out of sequence.
		for k := range i {
			if e := r.sq[k]; e.wr.Opcode.readsBack() && e.got < e.npkts {
				w, idx = e, e.npkts
				break
			}
		}
		if idx != w.got && !qp.nic.mut(MutReadNoReorder) {
			if idx > w.got && w.rereq != w.first+uint64(w.got) {
				w.rereq = w.first + uint64(w.got)
				qp.ctr.naksTx++ // an implied NAK: the requester's own go-back
				r.ackThrough(w.rereq - 1)
				r.rewind(w.rereq)
			} else {
				qp.ctr.dupPkts++
			}
			return
		}
	} else if r.rec(seq).acked {
		qp.ctr.dupPkts++
		return
	}
	if w.mr != nil && data != nil {
		copy(w.mr.slice(w.wr.Local.Addr+uint64(idx*qp.mtu), uint64(want)), data)
	}
	qp.ctr.rxDataBytes += int64(want)
	w.got++
	if qp.mode == ModeRoCEv2 {
		r.una = max(r.una, seq+1)
		r.progress()
		return
	}
	r.rec(seq).acked = true
	r.armRTO(qp.nic.sched.Now())
	if idx > w.hi+1 {
		for s := w.first + uint64(w.hi+1); s < seq; s++ {
			if !r.rec(s).acked && !r.rec(s).lost {
				r.markLost(s, true)
			}
		}
	}
	w.hi = max(w.hi, idx)
	r.advance()
}

// readPayload returns a READ response's data: the bytes after the
// Placement header for a MetaRoCE opcode. ok is false when malformed.
func (r *requester) readPayload(p *wire.Packet, meta bool) ([]byte, bool) {
	if p.Raw == nil {
		return nil, true
	}
	b := p.Payload()
	if meta {
		var h metaroce.Placement
		rest, err := metaroce.DecodePlacement(b, &h)
		if err != nil {
			return nil, false
		}
		b = rest
	}
	return b, true
}
