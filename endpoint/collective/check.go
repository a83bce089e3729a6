package collective

// verify compares every output element of every local rank with its
// expected value and returns how many differ (nccl-tests' #wrong).
func (r *run) verify() int64 {
	lay, typ, seed, it := r.lay, r.c.cfg.Type, r.c.cfg.Seed, r.iter
	n := lay.Ranks
	var wrong int64
	switch lay.Op {
	case AllReduce, ReduceScatter:
		// chunk c of the sum is checked on every rank for all_reduce, on
		// rank c only for reduce_scatter.
		for c := range n {
			lo, hi := lay.chunk(c)
			for i := lo; i < hi; i++ {
				var sum int32
				for q := range n {
					sum += fill(seed, it, q, i)
				}
				for rank := range n {
					if !r.c.local[rank] || lay.Op == ReduceScatter && rank != c {
						continue
					}
					if !typ.elemIs(r.ranks[rank].region, i, sum) {
						wrong++
					}
				}
			}
		}
	case AllGather:
		// block b of every output is rank b's input.
		for b := range n {
			lo, hi := lay.chunk(b)
			for i := lo; i < hi; i++ {
				want := fill(seed, it, b, i-lo)
				for rank := range n {
					if r.c.local[rank] && !typ.elemIs(r.ranks[rank].region, i, want) {
						wrong++
					}
				}
			}
		}
	case AllToAll:
		// block b of rank p's output is block p of rank b's input.
		for p := range n {
			if !r.c.local[p] {
				continue
			}
			plo, _ := lay.chunk(p)
			for b := range n {
				lo, hi := lay.chunk(b)
				for i := lo; i < hi; i++ {
					if !typ.elemIs(r.ranks[p].region, i, fill(seed, it, b, plo+i-lo)) {
						wrong++
					}
				}
			}
		}
	}
	return wrong
}
