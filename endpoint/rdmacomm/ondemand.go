package rdmacomm

import (
	"cmp"
	"fmt"
	"slices"
)

// pair is a connected QP pair under OnDemand: a→b and b→a.
type pair struct {
	ab, ba *conn
	used   uint64 // Transport.uses at the last write either way
}

func (p *pair) idle() bool { return p.ab.Pending() == 0 && p.ba.Pending() == 0 }

// connectOnDemand connects ranks from and to, then trims both ranks'
// pairs back to MaxPairs where idle ones allow.
func (t *Transport) connectOnDemand(from, to int) (*conn, error) {
	a, b := min(from, to), max(from, to)
	if err := t.connect(a, b); err != nil {
		return nil, err
	}
	p := &pair{ab: t.conns[[2]int{a, b}], ba: t.conns[[2]int{b, a}]}
	p.ab.pair, p.ba.pair = p, p
	t.live[a] = append(t.live[a], p)
	t.live[b] = append(t.live[b], p)
	t.connected++
	t.trim(a, p)
	t.trim(b, p)
	return t.conns[[2]int{from, to}], nil
}

// trim destroys rank r's least recently used idle pairs (never keep) once
// it has a quarter more than MaxPairs, down to MaxPairs: in batches, so
// that a rank moving through thousands of peers sorts its pairs once per
// MaxPairs/4 connections, not once per connection.
func (t *Transport) trim(r int, keep *pair) {
	live := t.live[r]
	if len(live) <= t.opts.MaxPairs+max(t.opts.MaxPairs/4, 1) {
		return
	}
	var idle []*pair
	for _, p := range live {
		if p != keep && p.idle() {
			idle = append(idle, p)
		}
	}
	slices.SortFunc(idle, func(a, b *pair) int { return cmp.Compare(a.used, b.used) })
	for _, p := range idle[:min(len(idle), len(live)-t.opts.MaxPairs)] {
		t.disconnect(p)
	}
}

// disconnect destroys an idle pair's QPs. Packets still on their way to
// them (a duplicate, a late acknowledgement) are dropped by the NICs as
// addressed to no QP, which is harmless once every write completed.
func (t *Transport) disconnect(p *pair) {
	for _, c := range []*conn{p.ab, p.ba} {
		c.qp.Destroy()
		delete(t.conns, [2]int{c.from, c.to})
		if r := t.ranks[c.from]; r.last == c {
			r.last = nil
		}
	}
	for _, r := range []int{p.ab.from, p.ab.to} {
		t.live[r] = slices.DeleteFunc(t.live[r], func(q *pair) bool { return q == p })
	}
}

// String names the pattern.
func (p Pairs) String() string {
	switch p {
	case Ring:
		return "ring"
	case All:
		return "all"
	case OnDemand:
		return "on-demand"
	}
	return fmt.Sprintf("Pairs(%d)", uint8(p))
}
