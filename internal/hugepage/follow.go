package hugepage

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"time"
)

// A Follower keeps the heap on huge pages as it grows. Advise covers the
// mappings that exist when it is called, and the Go runtime maps more as
// the heap grows, each time a new mapping without the advice: in the
// 1,024-host permutation the packets in flight and the queues that hold
// them, allocated after the lab is built, came to 88 of the run's 155 MB,
// all on 4 KiB pages. A Follower looks at the memory the runtime has
// mapped every period and, when it has grown, advises the new memory and
// collapses what of it was already touched.
type Follower struct {
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	r       Result
	advised []region // sorted, disjoint
	err     error    // the first error, kept for Follow
}

// DefaultPeriod is how often a Follower of a simulation looks: the heap
// grows by a few megabytes a look at most, and a look that finds nothing
// new costs a microsecond.
const DefaultPeriod = 2 * time.Millisecond

// Follow advises every anonymous mapping now (as Advise(true) does) and
// then, every period until Stop, the memory mapped since. It returns an
// error, and follows nothing, when nothing could be advised (no
// transparent huge pages here).
//
// With reserve > 0 it first has the Go runtime map that many bytes of
// heap (ReserveHeap), so that the heap's growth up to that size lands in
// memory advised before its first touch: it faults in on 2 MiB pages at
// once, where growth the runtime maps later is touched on 4 KiB pages
// before a look finds it and must then be collapsed, a copy. Reserved
// memory is mapped, not touched: it adds nothing to the resident size
// until the heap uses it (and where there are no huge pages to follow
// with, the reserve cost one garbage collection of a small heap).
func Follow(period time.Duration, reserve int64) (*Follower, error) {
	ReserveHeap(reserve)
	f := &Follower{stop: make(chan struct{}), done: make(chan struct{})}
	f.advise(true)
	if f.r.Regions == 0 && f.err != nil {
		return nil, f.err
	}
	go f.run(period)
	return f, nil
}

// ReserveHeap has the Go runtime map at least n bytes of heap that the
// heap then grows into: it allocates one object of n bytes, which a fresh
// mapping holds untouched (the runtime does not clear memory new from the
// kernel), drops it and collects it, leaving its pages free in the heap.
// It costs a garbage collection and no resident memory.
func ReserveHeap(n int64) {
	if n <= 0 {
		return
	}
	mapHeap(n)
	runtime.GC()
}

// mapHeap allocates n bytes and drops them; a function of its own, so
// that no frame of the caller's keeps the object alive for the collection.
//
//go:noinline
func mapHeap(n int64) { runtime.KeepAlive(make([]byte, n)) }

// Stop ends the following and returns what was done over its life: the
// regions and bytes advised and the collapses refused in all, and the
// process's memory on huge pages now. A mapping the kernel refused is not
// an error here: the run goes on on default pages.
func (f *Follower) Stop() Result {
	close(f.stop)
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.r
	r.Huge = anonHuge()
	return r
}

// Result returns what the follower has done so far. Huge is left 0: it
// is measured by Stop, since reading it walks the whole process's page
// tables, too much to do at every look.
func (f *Follower) Result() Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.r
}

func (f *Follower) run(period time.Duration) {
	defer close(f.done)
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(sample)
	last := sample[0].Value.Uint64()
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if now := sample[0].Value.Uint64(); now > last {
			last = now
			f.advise(true)
		}
	}
}

// advise marks MADV_HUGEPAGE, and collapses when asked, the parts of the
// anonymous mappings not advised before, keeping the first error.
func (f *Follower) advise(collapse bool) {
	maps, err := os.ReadFile("/proc/self/maps")
	var regions []region
	if err == nil {
		regions, err = anonRegions(maps)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		if f.err == nil {
			f.err = fmt.Errorf("huge pages: %w", err)
		}
		return
	}
	for _, g := range regions {
		for _, n := range uncovered(g, f.advised) {
			r, err := adviseRegion(n, collapse)
			if err != nil && f.err == nil {
				f.err = err
			}
			f.r.Regions += r.Regions
			f.r.Bytes += r.Bytes
			f.r.Short += r.Short
			if r.Regions > 0 {
				f.advised = insert(f.advised, n)
			}
		}
	}
}

// uncovered returns the parts of g outside the sorted disjoint regions
// have.
func uncovered(g region, have []region) []region {
	var out []region
	start := g.start
	for _, h := range have {
		if h.end <= start || h.start >= g.end {
			continue
		}
		if h.start > start {
			out = append(out, region{start, h.start})
		}
		start = max(start, h.end)
		if start >= g.end {
			return out
		}
	}
	if start < g.end {
		out = append(out, region{start, g.end})
	}
	return out
}

// insert adds g (disjoint from every region of have) to the sorted
// regions have, merging neighbours.
func insert(have []region, g region) []region {
	i, _ := slices.BinarySearchFunc(have, g.start, func(h region, s uintptr) int {
		switch {
		case h.start < s:
			return -1
		case h.start > s:
			return 1
		}
		return 0
	})
	have = slices.Insert(have, i, g)
	if i+1 < len(have) && have[i].end == have[i+1].start {
		have[i].end = have[i+1].end
		have = slices.Delete(have, i+1, i+2)
	}
	if i > 0 && have[i-1].end == have[i].start {
		have[i-1].end = have[i].end
		have = slices.Delete(have, i, i+1)
	}
	return have
}
