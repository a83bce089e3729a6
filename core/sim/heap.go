package sim

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/rocelab/rocelab/core/clock"
)

// A key packs an event's insertion sequence and its payload slot into one
// word: ord = seq<<slotBits | slot. Keys are 16 bytes without pointers, so
// sifting them costs no GC write barriers, and the four children of a node
// fill exactly one 64-byte cache line (see keyHeap).
const (
	slotBits = 28 // up to 268M pending events
	slotMask = 1<<slotBits - 1
	maxSeq   = 1<<(64-slotBits) - 1 // renumber before seq reaches this
)

// key is one heap entry: when the event is due and its ord.
type key struct {
	at  clock.Time
	ord uint64
}

func (k key) slot() uint32 { return uint32(k.ord & slotMask) }

// before orders events by (time, insertion sequence). Sequences are
// unique, so comparing ord compares sequences.
func (k *key) before(b *key) bool {
	return k.at < b.at || (k.at == b.at && k.ord < b.ord)
}

// below is before as 0 or 1, computed without a branch: (at, ord) as one
// 128-bit number (at is never negative), k below b when k - b borrows.
func (k *key) below(b *key) uint64 {
	_, borrow := bits.Sub64(k.ord, b.ord, 0)
	_, borrow = bits.Sub64(uint64(k.at), uint64(b.at), borrow)
	return borrow
}

// payload is what an event does: h.Handle(arg), h being a Schedule
// handler or an AfterFunc/At timer (*funcTimer). A cancelled event's
// payload is empty. 32 bytes, so that two share a cache line.
type payload struct {
	h   Handler
	arg any
}

// keyHeap is a 4-ary min-heap laid out so that sibling groups are aligned:
// the root sits at index root (3), the children of node i are
// 4i-8 … 4i-5, and its parent is i/4+2. Indices 0–2 are unused. Large
// slices are page-aligned, so each group of four 16-byte keys is one cache
// line and a level of sift-down costs one line.
type keyHeap []key

const root = 3

func newKeyHeap() keyHeap { return make(keyHeap, root, 64) }

func (h keyHeap) len() int { return len(h) - root }

func (h *keyHeap) push(k key) {
	*h = append(*h, k)
	h.up(len(*h) - 1)
}

// up moves k at index i toward the root.
func (h keyHeap) up(i int) {
	k := h[i]
	for i > root {
		p := i/4 + 2
		if !k.before(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = k
}

// pop removes and returns the minimum; the heap must not be empty.
//
// It refills the root bottom-up (Floyd): the hole walks to a leaf along the
// smallest children without comparing against the last key, which then
// sifts up from there. The last key usually belongs near the bottom, so
// this saves a comparison per level.
func (h *keyHeap) pop() key {
	s := *h
	top := s[root]
	n := len(s) - 1
	last := s[n]
	s = s[:n]
	*h = s
	if n == root {
		return top
	}
	i := s.holeToLeaf()
	s[i] = last
	s.up(i)
	return top
}

// replaceTop puts k in the root's place and restores the heap, as a pop
// and a push would, in one walk: the hole left at the root goes to a leaf
// and k sifts up from there.
func (h keyHeap) replaceTop(k key) {
	i := h.holeToLeaf()
	h[i] = k
	h.up(i)
}

// holeToLeaf moves the smallest child into the hole at the root, and so on
// down to a leaf, and returns the leaf's index, the hole's last place.
func (h keyHeap) holeToLeaf() int {
	s, n := h, len(h)
	i := root
	for {
		c := 4*i - 8
		if c >= n {
			return i
		}
		m := c
		if c+3 < n {
			// The least of four without a branch on their order (see
			// below): which child is least is a coin toss to the branch
			// predictor, and a mispredicted branch per comparison was
			// most of a pop's time (a heap of a thousand keys sits in L1).
			a := c + int(s[c+1].below(&s[c]))
			b := c + 2 + int(s[c+3].below(&s[c+2]))
			mask := -int(s[b].below(&s[a]))
			m = a ^ (a^b)&mask
		} else {
			for j := c + 1; j < n; j++ {
				if s[j].before(&s[m]) {
					m = j
				}
			}
		}
		s[i] = s[m]
		i = m
	}
}

// filter keeps the keys for which keep is true and restores the heap.
func (h *keyHeap) filter(keep func(key) bool) {
	s := (*h)[root:]
	k := 0
	for _, x := range s {
		if keep(x) {
			s[k] = x
			k++
		}
	}
	*h = (*h)[:root+k]
	h.sortOrder()
}

// sortOrder sorts the keys by (time, sequence); a sorted array is a heap.
func (h keyHeap) sortOrder() {
	slices.SortFunc(h[root:], func(a, b key) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.ord, b.ord)
	})
}

// renumber gives the pending keys the sequences 0…n-1 in their current
// order and returns n, the next free sequence. It keeps seq from
// overflowing its bits in very long runs (once every 2^36 events).
func (h keyHeap) renumber() uint64 {
	h.sortOrder()
	for i := range h[root:] {
		k := &h[root+i]
		k.ord = uint64(i)<<slotBits | uint64(k.slot())
	}
	return uint64(h.len())
}
