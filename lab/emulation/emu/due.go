package emu

import "github.com/rocelab/rocelab/core/clock"

// dueHeap is a binary min-heap of the due times of everything the Loop
// scheduled (model timers and frames read but not yet due): its minimum is when
// the Loop must next wake. The engine keeps the events themselves; it does
// not say when its next one is due, so the Loop keeps this shadow of the
// times. A cancelled timer's time stays until it passes, which at worst
// wakes the Loop once for nothing.
type dueHeap []clock.Time

func (h *dueHeap) push(t clock.Time) {
	*h = append(*h, t)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p] <= t {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = t
}

// min returns the earliest due time, and false when nothing is due.
func (h dueHeap) min() (clock.Time, bool) {
	if len(h) == 0 {
		return 0, false
	}
	return h[0], true
}

// popUntil removes every time at or before t.
func (h *dueHeap) popUntil(t clock.Time) {
	for len(*h) > 0 && (*h)[0] <= t {
		h.pop()
	}
}

func (h *dueHeap) pop() {
	s := *h
	n := len(s) - 1
	last := s[n]
	s = s[:n]
	*h = s
	if n == 0 {
		return
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && s[c+1] < s[c] {
			c++
		}
		if last <= s[c] {
			break
		}
		s[i] = s[c]
		i = c
	}
	s[i] = last
}
