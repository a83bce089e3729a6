// Package seqtab holds values under the numbers they were handed out in
// sequence: QP numbers, the index part of memory keys, work request IDs.
package seqtab

import (
	"fmt"

	"github.com/rocelab/rocelab/core/slide"
)

// Table maps numbers handed out in sequence to values. It is a slice
// indexed by the number's distance from the oldest live one, modulo 2^24
// (the width of a QPN), so a lookup on a data path is one bounds check
// and one load, not a hash probe: a 2,048-rank simulated all-reduce spent
// a tenth of its time in the maps this replaces. Holes left by values
// removed out of order stay until everything older is gone too; the
// slice never holds more than the span from the oldest live number to
// the newest, so fewer than 2^24 numbers may be live at once. The zero
// Table is empty and ready.
type Table[T any] struct {
	base  uint32 // the number held by slots[0]
	slots []slot[T]
	n     int // live entries
	// buf is the whole array slots lies in: Delete reslices slots forward,
	// and Put moves the live span back to buf's start when it can
	// (slide.Append) instead of growing a slice that crept to its array's
	// end.
	buf []slot[T]
}

type slot[T any] struct {
	v    T
	live bool
}

// Mask is the numbers' width: they count modulo 2^24.
const Mask = 1<<24 - 1

// MaxGap is the most numbers Put may skip past the newest held.
const MaxGap = 1 << 16

func (t *Table[T]) index(num uint32) (int, bool) {
	i := int((num - t.base) & Mask)
	return i, i < len(t.slots) && t.slots[i].live
}

// Get returns num's value and whether there is one.
func (t *Table[T]) Get(num uint32) (T, bool) {
	if i, ok := t.index(num); ok {
		return t.slots[i].v, true
	}
	var zero T
	return zero, false
}

// Put stores v under num, which must not be older than the oldest number
// held (numbers handed out in sequence never are). It panics on a number
// that would leave a gap of more than MaxGap: an older one counts as
// almost 2^24 ahead, and the slice would grow to match.
func (t *Table[T]) Put(num uint32, v T) {
	if t.n == 0 {
		t.base, t.slots = num&Mask, t.buf[:0]
	}
	i, live := t.index(num)
	if i > len(t.slots)+MaxGap {
		panic(fmt.Sprintf("seqtab: Put(%d) leaves a gap of %d after the numbers held from %d: not handed out in sequence", num, i-len(t.slots), t.base))
	}
	for len(t.slots) <= i {
		slide.Append(&t.slots, &t.buf, slot[T]{})
	}
	if !live {
		t.n++
	}
	t.slots[i] = slot[T]{v: v, live: true}
}

// Delete removes num's value, if any, and trims the holes at the front.
func (t *Table[T]) Delete(num uint32) {
	i, ok := t.index(num)
	if !ok {
		return
	}
	t.slots[i] = slot[T]{}
	t.n--
	k := 0
	for k < len(t.slots) && !t.slots[k].live {
		k++
	}
	// Reslicing forward copies nothing; the next growth of the slice
	// copies only what is live.
	t.slots = t.slots[k:]
	t.base = (t.base + uint32(k)) & Mask
}

// Len returns how many values the table holds.
func (t *Table[T]) Len() int { return t.n }

// Each calls f for every value, oldest number first.
func (t *Table[T]) Each(f func(num uint32, v T)) {
	for i := range t.slots {
		if s := &t.slots[i]; s.live {
			f((t.base+uint32(i))&Mask, s.v)
		}
	}
}
