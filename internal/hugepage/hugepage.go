// Package hugepage backs the Go heap with transparent huge pages.
//
// The simulator's state (switch ports, queues, packets in flight, QPs) is
// touched in no particular order, so on a machine with 4 KiB pages nearly
// every packet-hop misses the TLB; in a virtual machine each miss walks two
// page tables. Go no longer asks the kernel for huge pages for its heap, and
// most distributions set transparent huge pages to "madvise", so without
// help the heap stays on 4 KiB pages. Advise marks the process's anonymous
// mappings MADV_HUGEPAGE (new faults get 2 MiB pages) and can collapse what
// is already resident (MADV_COLLAPSE, Linux 6.1). On the 1,024-host
// permutation of lab/simulation/simbench this is worth about 1.6× (see
// docs/performance.md).
//
// Nothing here changes a system setting: the advice applies to this
// process's memory only, and where the kernel lacks it (THP "never", old
// kernels, other systems) Advise reports an error and changes nothing.
package hugepage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// minRegion is the smallest mapping worth advising: one huge page.
const minRegion = 2 << 20

// Result says what Advise did.
type Result struct {
	Regions int   // mappings advised
	Bytes   int64 // their total size
	Huge    int64 // anonymous memory on huge pages afterwards (AnonHugePages)
	// Short counts the 2 MiB collapses the kernel refused for reasons of
	// the moment, not of Advise: no free huge page (ENOMEM), the cgroup's
	// charge (EBUSY), a page briefly pinned or locked (EAGAIN).
	Short int
}

// Advise marks every anonymous private writable mapping of at least 2 MiB
// MADV_HUGEPAGE and, when collapse is set, collapses their resident pages
// into huge pages at once. Call it after the large allocations of a run
// (building a topology) and before the hot loop. Memory the Go runtime maps
// later is not covered: Follow covers it as it comes.
func Advise(collapse bool) (Result, error) {
	var f Follower
	f.advise(collapse)
	r := f.r
	r.Huge = anonHuge()
	if r.Regions == 0 && f.err != nil {
		return r, f.err
	}
	return r, nil
}

// adviseRegion marks g MADV_HUGEPAGE and, when collapse is set, collapses
// its resident pages; Regions is 1 once g is advised.
func adviseRegion(g region, collapse bool) (Result, error) {
	var r Result
	if err := madvise(g.start, g.end-g.start, madvHugepage); err != nil {
		return r, fmt.Errorf("huge pages: madvise %#x+%d: %w", g.start, g.end-g.start, err)
	}
	r.Regions, r.Bytes = 1, int64(g.end-g.start)
	if collapse {
		// One huge page a call: the kernel gives up on the rest of a
		// range at some failures, and untouched pages fail with EINVAL.
		// Best effort; Huge says what came of it.
		for a := g.start; a < g.end; a += minRegion {
			err := madvise(a, minRegion, madvCollapse)
			if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.ENOMEM) || errors.Is(err, syscall.EBUSY) {
				r.Short++
			}
		}
	}
	return r, nil
}

// anonHuge returns the process's AnonHugePages in bytes, or -1 when the
// kernel does not say.
func anonHuge() int64 {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return -1
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("AnonHugePages:")); ok {
			f := bytes.Fields(rest)
			if len(f) == 2 && string(f[1]) == "kB" {
				if kb, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil {
					return kb << 10
				}
			}
		}
	}
	return -1
}

type region struct{ start, end uintptr }

// anonRegions parses /proc/self/maps and returns the anonymous private
// read-write mappings of at least minRegion bytes, with their bounds
// rounded inward to huge-page boundaries.
func anonRegions(maps []byte) ([]region, error) {
	var out []region
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// address perms offset dev inode [pathname]; the Go runtime
		// names its mappings ("[anon: Go: heap]"), so a name may have
		// spaces.
		f := bytes.Fields(sc.Bytes())
		if len(f) < 5 || string(f[1]) != "rw-p" || string(f[4]) != "0" {
			continue
		}
		if name := bytes.Join(f[5:], []byte(" ")); len(name) > 0 &&
			!bytes.HasPrefix(name, []byte("[anon")) && string(name) != "[heap]" {
			continue // a file, the stack, vdso…
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		if !ok {
			return nil, fmt.Errorf("maps: bad address range %q", f[0])
		}
		start, err := strconv.ParseUint(string(lo), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("maps: %w", err)
		}
		end, err := strconv.ParseUint(string(hi), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("maps: %w", err)
		}
		start = (start + minRegion - 1) &^ (minRegion - 1)
		end &^= minRegion - 1
		if end > start {
			out = append(out, region{uintptr(start), uintptr(end)})
		}
	}
	return out, sc.Err()
}

// AdviseBytes marks the whole 2 MiB pages inside b MADV_HUGEPAGE, so that
// its first touches fault in 2 MiB at a time instead of 4 KiB: a 4 MiB
// buffer then takes 2 faults, not 1,024 (in a VM a fault costs tens of
// microseconds). It reports how many bytes it advised; 0 for a buffer
// that holds no whole huge page, or where the kernel refuses (the error).
func AdviseBytes(b []byte) (int, error) {
	if len(b) < minRegion {
		return 0, nil
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start + minRegion - 1) &^ (minRegion - 1)
	hi := (start + uintptr(len(b))) &^ (minRegion - 1)
	if hi <= lo {
		return 0, nil
	}
	if err := madvise(lo, hi-lo, madvHugepage); err != nil {
		return 0, fmt.Errorf("huge pages: madvise %#x+%d: %w", lo, hi-lo, err)
	}
	return int(hi - lo), nil
}
