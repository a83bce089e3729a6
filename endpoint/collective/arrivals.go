package collective

// arrivals records which of a rank's expected arrivals (by arrivalIndex)
// have come, so that a duplicate is caught. A ring's arrivals come in
// step order, nearly always, so the record is a low-water mark and a
// 64-bit window above it, in the rank's own cache line; an arrival more
// than 63 ahead of the lowest missing one goes to a bitmap beside it
// (all-to-all arrivals, whose order is the senders', mostly go there).
// On 2,048 ranks, an array of flags cost a cache miss per arrival: the
// rank's flags were long out of cache by its next arrival.
type arrivals struct {
	low  int    // every index below low has arrived
	win  uint64 // bit i: index low+i has arrived (bit 0 is always clear)
	far  int    // arrivals recorded in bits
	n    int    // indices 0 … n-1
	bits []uint64
}

// newArrivals returns the record of indices 0 … n-1, none arrived.
func newArrivals(n int) arrivals {
	return arrivals{n: n, bits: make([]uint64, (n+63)/64)}
}

// add records index i (0 ≤ i < n) and reports whether it had arrived
// already.
func (a *arrivals) add(i int) (dup bool) {
	d := i - a.low
	switch {
	case d < 0:
		return true
	case d >= 64:
		w, b := i/64, uint(i%64)
		if a.bits[w]>>b&1 != 0 {
			return true
		}
		a.bits[w] |= 1 << b
		a.far++
		return false
	case a.win>>uint(d)&1 != 0:
		return true
	}
	a.win |= 1 << uint(d)
	for a.win&1 != 0 {
		a.win >>= 1
		a.low++
		// Index low+63 has just come into the window.
		if j := a.low + 63; a.far > 0 && j < a.n && a.bits[j/64]>>uint(j%64)&1 != 0 {
			a.bits[j/64] &^= 1 << uint(j%64)
			a.far--
			a.win |= 1 << 63
		}
	}
	return false
}

// reset forgets every arrival.
func (a *arrivals) reset() {
	a.low, a.win = 0, 0
	if a.far > 0 {
		clear(a.bits)
		a.far = 0
	}
}
