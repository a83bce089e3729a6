package switchmodel

import "github.com/rocelab/rocelab/wire"

// trim tries to forward the headers of p, refused by the buffer, instead of
// dropping it: cut to Trim.Bytes, DSCP rewritten to Trim.DSCP (how the
// receiver knows), queued on eg in class Trim.Priority and accounted in the
// ingress PG of that class. It reports false when even the trimmed header
// does not fit; the caller then drops p.
func (eg *Port) trim(p *wire.Packet, in *Port, tc uint8) bool {
	s := eg.sw
	tp := s.cfg.Trim.Priority
	keep := min(p.Len, s.cfg.Trim.Bytes)
	n := int64(keep)
	g := &in.pg[tp]
	q := &eg.q[tp]
	w := s.mmu.admit(g, n)
	if w == refused || (!g.lossless && s.cfg.EgressQueueLimit > 0 && q.bytes+n > s.cfg.EgressQueueLimit) {
		return false
	}
	if p.PayloadLen > 0 {
		p.PayloadLen = uint16(max(0, min(int(p.PayloadLen), keep-int(p.PayloadOffset))))
		if p.PayloadOffset == 0 {
			p.PayloadLen = 0
		}
	}
	p.Len = keep
	p.DSCP = s.cfg.Trim.DSCP
	if p.Raw != nil {
		p.WriteTrim()
	}
	eg.ctl(int(tc)).trims++
	s.mmu.charge(g, n, w)
	eg.push(tp, entry{p: p, size: int32(n), in: uint16(in.idx), pg: tp, trimmed: true})
	in.checkXoff(int(tp))
	eg.kick()
	return true
}
