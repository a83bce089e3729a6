package endpoint

// appendSliding appends v to the queue *q, whose consumer takes from the
// front by reslicing (*q = (*q)[1:]). buf remembers the whole array *q
// lies in: when *q has crept to its array's end and fills at most half of
// it, its elements move back to the array's start before the append,
// instead of append growing a new array every time the queue reaches the
// end. A QP's send and receive queues slide this way at every WR, and the
// arrays they grew were a third of a 2,048-rank all-reduce's allocations.
// If *q no longer lies at the end of buf's array (the queue was replaced),
// it is left as it is.
func appendSliding[T any](q, buf *[]T, v T) {
	s, b := *q, *buf
	if len(s) == cap(s) && len(s) <= cap(b)/2 && cap(s) > 0 && &s[:cap(s)][cap(s)-1] == &b[:cap(b)][cap(b)-1] {
		off := cap(b) - cap(s)
		n := copy(b[:cap(b)], s)
		clear(b[n : off+n])
		s = b[:n]
	}
	c := cap(s)
	s = append(s, v)
	if cap(s) != c { // a new array
		*buf = s[:cap(s)]
	}
	*q = s
}
