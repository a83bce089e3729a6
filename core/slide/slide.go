// Package slide keeps a queue that is consumed from its front by
// reslicing in one array: the append moves the queue back to the array's
// start instead of growing a new array every time it reaches the end. A
// QP's send and receive queues and a sequence table's window of numbers
// slide this way.
package slide

// Append appends v to the queue *q, whose consumer takes from the front
// by reslicing (*q = (*q)[1:]). buf remembers the whole array *q lies in:
// when *q has crept to its array's end and fills at most half of it, its
// elements move back to the array's start before the append, instead of
// append growing a new array every time the queue reaches the end (the
// arrays a QP's queues grew were a third of a 2,048-rank all-reduce's
// allocations, and a sequence table's growing window 1.2 % of its CPU).
// If *q no longer lies at the end of buf's array (the queue was
// replaced), it is left as it is.
func Append[T any](q, buf *[]T, v T) {
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
