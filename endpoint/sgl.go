package endpoint

import "fmt"

// MaxSGE is the most scatter/gather entries a WR may have: its Local
// entry and MaxSGE-1 More.
const MaxSGE = 16

// sgPart is one entry of a WR's scatter/gather list, looked up.
type sgPart struct {
	mr   *MR
	addr uint64
	n    uint64
}

// sgList looks up a WR's entries (first, then more) for access need, in
// pd. A WR with one entry needs nothing more: its region is the one the
// model moves data through (mr, at first.Addr). One with several gets a
// private region of the list's total length instead (returned with
// first's replacement, addressed from 0) that the model moves the message
// through: gathered from the entries when the WR is posted (a program
// may not touch a posted WR's buffers until it completes) and scattered
// to them when it completes (receives, READs).
func (n *NIC) sgList(pd *PD, first SGE, more []SGE, need Access) (mr *MR, local SGE, parts []sgPart, err error) {
	if len(more) == 0 {
		if first.Length == 0 {
			return nil, first, nil, nil
		}
		mr, err := n.lookup(first.LKey, false, pd, first.Addr, uint64(first.Length), need)
		return mr, first, nil, err
	}
	if len(more)+1 > MaxSGE {
		return nil, first, nil, fmt.Errorf("%d scatter/gather entries (at most %d)", len(more)+1, MaxSGE)
	}
	var total uint64
	raw := true
	for i, s := range append([]SGE{first}, more...) {
		if s.Length == 0 {
			continue
		}
		m, err := n.lookup(s.LKey, false, pd, s.Addr, uint64(s.Length), need)
		if err != nil {
			return nil, first, nil, fmt.Errorf("entry %d: %w", i, err)
		}
		raw = raw && m.Buf != nil
		parts = append(parts, sgPart{mr: m, addr: s.Addr, n: uint64(s.Length)})
		total += uint64(s.Length)
	}
	if total >= 1<<32 {
		return nil, first, nil, fmt.Errorf("scatter/gather list of %d bytes", total)
	}
	b := &MR{pd: pd, Length: total}
	if raw {
		b.Buf = make([]byte, total)
	}
	return b, SGE{Addr: 0, Length: uint32(total), LKey: first.LKey}, parts, nil
}

// gather copies parts, in order, into b.
func gather(b *MR, parts []sgPart) {
	if b.Buf == nil {
		return
	}
	at := uint64(0)
	for _, p := range parts {
		if src := p.mr.slice(p.addr, p.n); src != nil {
			copy(b.Buf[at:], src)
		}
		at += p.n
	}
}

// scatter copies the first n bytes of b to parts, in order.
func scatter(b *MR, parts []sgPart, n uint64) {
	if b.Buf == nil {
		return
	}
	at := uint64(0)
	for _, p := range parts {
		if at >= n {
			return
		}
		k := min(p.n, n-at)
		if dst := p.mr.slice(p.addr, k); dst != nil {
			copy(dst, b.Buf[at:at+k])
		}
		at += k
	}
}
