package simlab

import "github.com/rocelab/rocelab/topologies"

// HeapPerLink is about how much heap a lab needs at its peak for each link
// of its topology: the ports at both ends with their queues and counters,
// the NICs and the packets in flight. On the 1,024-host fat tree (3,072
// links) the single-path permutation peaked at 150–160 MB and the sprayed
// one at about 265 MB; the 2,048-GPU all-reduce (4,096 links) at about
// 280 MB. Reserving more than a run uses costs address space, not memory.
const HeapPerLink = 96 << 10

// HeapReserve returns how much heap to map ahead of building a lab on t
// (internal/hugepage.ReserveHeap), so that the lab and its run grow into
// memory that a huge-page follower advised before its first touch.
func HeapReserve(t *topologies.Topology) int64 {
	return int64(len(t.Links)) * HeapPerLink
}
