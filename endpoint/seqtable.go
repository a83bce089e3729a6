package endpoint

// seqTable maps the numbers a NIC hands out in sequence (QP numbers, the
// index part of memory keys) to their objects. It is a slice indexed by
// the number's distance from the oldest live one, modulo 2^24 (the width
// of a QPN), so a lookup on the data path is one bounds check and one
// load, not a hash probe: a 2,048-rank simulated all-reduce spent a tenth
// of its time in the maps this replaces. Holes left by objects removed
// out of order stay until everything older is gone too; the slice never
// holds more than the span from the oldest live number to the newest.
type seqTable[T any] struct {
	base  uint32 // the number held by slots[0]
	slots []*T
	n     int // live entries
}

const seqMask = 1<<24 - 1

func (t *seqTable[T]) index(num uint32) (int, bool) {
	i := int((num - t.base) & seqMask)
	return i, i < len(t.slots)
}

// get returns the object of num, or nil.
func (t *seqTable[T]) get(num uint32) *T {
	if i, ok := t.index(num); ok {
		return t.slots[i]
	}
	return nil
}

// put stores v under num, which must be newer than every number stored
// (or the first one stored since the table was last empty).
func (t *seqTable[T]) put(num uint32, v *T) {
	if t.n == 0 {
		t.base, t.slots = num&seqMask, t.slots[:0]
	}
	i, _ := t.index(num)
	for len(t.slots) <= i {
		t.slots = append(t.slots, nil)
	}
	if t.slots[i] == nil {
		t.n++
	}
	t.slots[i] = v
}

// del removes num's object, if any, and trims the holes at the front.
func (t *seqTable[T]) del(num uint32) {
	i, ok := t.index(num)
	if !ok || t.slots[i] == nil {
		return
	}
	t.slots[i] = nil
	t.n--
	k := 0
	for k < len(t.slots) && t.slots[k] == nil {
		k++
	}
	// Reslicing forward copies nothing; the next growth of the slice
	// copies only what is live.
	t.slots = t.slots[k:]
	t.base = (t.base + uint32(k)) & seqMask
}

// len returns how many objects the table holds.
func (t *seqTable[T]) len() int { return t.n }

// each calls f for every object, oldest number first.
func (t *seqTable[T]) each(f func(num uint32, v *T)) {
	for i, v := range t.slots {
		if v != nil {
			f((t.base+uint32(i))&seqMask, v)
		}
	}
}
