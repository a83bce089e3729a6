package collective

import "fmt"

// Layout is how a collective of a given nccl-tests size is laid out on each
// rank. Size and Count follow nccl-tests: the size of the larger of the
// two buffers of one rank —
//
//	all_reduce      input = output = Count elements
//	all_gather      input Count/n, output Count   (S = sendcount × n)
//	reduce_scatter  input Count,   output Count/n (S = recvcount × n)
//	alltoall        input = output = Count, n blocks of Count/n
//
// For the last three, a requested size is rounded down to a whole number of
// elements per rank, as nccl-tests does.
type Layout struct {
	Op    Op
	Ranks int
	Size  int64 // bytes, as nccl-tests prints it
	Count int64 // Size / 4
	Block int64 // elements per rank block (Count/n), 0 for all_reduce
}

// NewLayout returns the layout of op on n ranks for a requested size in
// bytes.
func NewLayout(op Op, n int, size int64) (Layout, error) {
	if _, ok := opNames[op]; !ok {
		return Layout{}, fmt.Errorf("collective: unknown op %d", op)
	}
	if n < 2 {
		return Layout{}, fmt.Errorf("collective: %d ranks, want >= 2", n)
	}
	if size < 0 {
		return Layout{}, fmt.Errorf("collective: negative size %d", size)
	}
	l := Layout{Op: op, Ranks: n}
	count := size / elemSize
	if op != AllReduce {
		l.Block = count / int64(n)
		count = l.Block * int64(n)
	}
	l.Count = count
	l.Size = count * elemSize
	return l, nil
}

// InElems is the length of each rank's input, in elements.
func (l Layout) InElems() int64 {
	if l.Op == AllGather {
		return l.Block
	}
	return l.Count
}

// RegionBytes is the size of the receive region each rank registers with
// the Transport: the output buffer (all_reduce, all_gather, alltoall) or,
// for reduce_scatter, a whole-input-sized scratch whose chunk r is rank r's
// output.
func (l Layout) RegionBytes() int64 { return l.Count * elemSize }

// chunk returns the element range [lo, hi) of chunk c: the Count elements
// cut into n nearly equal chunks (sizes differ by at most one, some may be
// empty when Count < n).
func (l Layout) chunk(c int) (lo, hi int64) {
	n := int64(l.Ranks)
	return l.Count * int64(c) / n, l.Count * int64(c+1) / n
}

// chunkMax is the length of the longest chunk.
func (l Layout) chunkMax() int64 {
	n := int64(l.Ranks)
	return (l.Count + n - 1) / n
}
