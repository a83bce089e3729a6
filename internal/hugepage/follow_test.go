package hugepage

import (
	"fmt"
	"os"
	"os/exec"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

func TestUncovered(t *testing.T) {
	have := []region{{10, 20}, {30, 40}}
	for _, c := range []struct {
		name string
		g    region
		want []region
	}{
		{"inside one", region{12, 18}, nil},
		{"exactly one", region{10, 20}, nil},
		{"before all", region{0, 10}, []region{{0, 10}}},
		{"after all", region{40, 50}, []region{{40, 50}}},
		{"between", region{20, 30}, []region{{20, 30}}},
		{"spanning both", region{0, 50}, []region{{0, 10}, {20, 30}, {40, 50}}},
		{"tail of one", region{15, 25}, []region{{20, 25}}},
		{"head of the second", region{25, 35}, []region{{25, 30}}},
		{"a grown mapping", region{10, 40}, []region{{20, 30}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := uncovered(c.g, have); !slices.Equal(got, c.want) {
				t.Errorf("uncovered(%v) = %v, want %v", c.g, got, c.want)
			}
		})
	}
	if got := uncovered(region{5, 9}, nil); !slices.Equal(got, []region{{5, 9}}) {
		t.Errorf("with nothing advised: %v", got)
	}
}

func TestInsert(t *testing.T) {
	for _, c := range []struct {
		name string
		have []region
		g    region
		want []region
	}{
		{"into nothing", nil, region{1, 2}, []region{{1, 2}}},
		{"apart, first", []region{{10, 20}}, region{1, 5}, []region{{1, 5}, {10, 20}}},
		{"apart, last", []region{{10, 20}}, region{30, 35}, []region{{10, 20}, {30, 35}}},
		{"touching before", []region{{10, 20}}, region{5, 10}, []region{{5, 20}}},
		{"touching after", []region{{10, 20}}, region{20, 25}, []region{{10, 25}}},
		{"filling a gap", []region{{10, 20}, {30, 40}}, region{20, 30}, []region{{10, 40}}},
		{"in a gap", []region{{10, 20}, {30, 40}}, region{22, 28}, []region{{10, 20}, {22, 28}, {30, 40}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := insert(slices.Clone(c.have), c.g); !slices.Equal(got, c.want) {
				t.Errorf("insert(%v, %v) = %v, want %v", c.have, c.g, got, c.want)
			}
		})
	}
}

// TestFollowAdvisesGrowth: memory the heap maps after Follow, 64 MiB for
// small objects, is advised within a few periods and ends on huge pages,
// where the kernel has transparent huge pages.
func TestFollowAdvisesGrowth(t *testing.T) {
	setting, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	available := err == nil && !strings.Contains(string(setting), "[never]")
	f, err := Follow(time.Millisecond, 0)
	if !available {
		if err == nil {
			r := f.Stop()
			if r.Huge > 0 {
				t.Errorf("%d bytes on huge pages with THP off", r.Huge)
			}
		}
		t.Logf("transparent huge pages are off here (%q): nothing to follow", strings.TrimSpace(string(setting)))
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	before := f.Result()
	before.Huge = anonHuge() // Result leaves it to Stop
	// Allocate until the runtime has mapped 64 MiB more: earlier tests (or
	// -count) may have left room in the heap that takes the first objects.
	mapped := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(mapped)
	start := mapped[0].Value.Uint64()
	var keep []*[256]byte
	for mapped[0].Value.Uint64() < start+64<<20 {
		for range 4096 {
			o := new([256]byte)
			o[0] = 1
			keep = append(keep, o)
		}
		metrics.Read(mapped)
	}
	deadline := time.Now().Add(5 * time.Second)
	for f.Result().Bytes < before.Bytes+32<<20 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	r := f.Stop()
	t.Logf("before %+v, after %+v", before, r)
	if r.Bytes < before.Bytes+32<<20 {
		t.Fatalf("advised %d bytes before and %d after 64 MiB were allocated: the growth was not followed", before.Bytes, r.Bytes)
	}
	if r.Huge+int64(r.Short)*(2<<20) < before.Huge+32<<20 {
		t.Errorf("on huge pages: %d bytes before, %d after (%d collapses refused)", before.Huge, r.Huge, r.Short)
	}
	// Stopped means stopped: growth afterwards is not advised.
	after := f.Result()
	more := make([]*[256]byte, 0, 128<<10)
	for range cap(more) {
		more = append(more, new([256]byte))
	}
	time.Sleep(20 * time.Millisecond)
	if got := f.Result(); got.Bytes != after.Bytes {
		t.Errorf("advised %d bytes after Stop, %d at it", got.Bytes, after.Bytes)
	}
	_, _ = keep[len(keep)-1], more[len(more)-1]
}

// TestFollowReservesAhead: with 96 MiB reserved, 48 MiB of small objects
// allocated afterwards fit in memory the runtime had already mapped and the
// follower had advised: the runtime maps (almost) nothing more, nothing new
// is left to advise and collapse, and the objects lie on huge pages.
//
// It runs in a process of its own: in this test binary's heap, earlier
// tests' freed memory (touched before any advice, so on small pages) is
// where the runtime would put the objects first.
func TestFollowReservesAhead(t *testing.T) {
	if os.Getenv(freshEnv) == "" {
		inFreshProcess(t)
		return
	}
	setting, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(setting), "[never]") {
		t.Logf("transparent huge pages are off here (%q): nothing to reserve for", strings.TrimSpace(string(setting)))
		return
	}
	mapped := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(mapped)
	start := mapped[0].Value.Uint64()
	f, err := Follow(time.Millisecond, 96<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	metrics.Read(mapped)
	reserved := mapped[0].Value.Uint64()
	if reserved < start+96<<20 {
		t.Fatalf("the runtime mapped %d bytes for a reserve of %d", reserved-start, 96<<20)
	}
	before := f.Result()
	fallbacks := vmstat(t, "thp_fault_fallback")
	keep := make([]*[256]byte, 0, (48<<20)/256)
	for range cap(keep) {
		o := new([256]byte)
		o[0] = 1
		keep = append(keep, o)
	}
	metrics.Read(mapped)
	fellBack := vmstat(t, "thp_fault_fallback") - fallbacks
	time.Sleep(10 * time.Millisecond) // a few looks
	after := f.Result()
	grew := mapped[0].Value.Uint64() - reserved
	t.Logf("mapped %d MiB more for 48 MiB of objects; advised %d MiB before, %d MiB after", grew>>20, before.Bytes>>20, after.Bytes>>20)
	if grew > 16<<20 { // room for the runtime's own metadata
		t.Errorf("the runtime mapped %d MiB more for 48 MiB of objects after a reserve of 96 MiB", grew>>20)
	}
	if after.Bytes > before.Bytes+16<<20 {
		t.Errorf("advised %d MiB before the objects and %d MiB after: they were not in the reserve", before.Bytes>>20, after.Bytes>>20)
	}
	for _, o := range []*[256]byte{keep[len(keep)/4], keep[len(keep)/2], keep[3*len(keep)/4]} {
		huge, err := hugeAt(uintptr(unsafe.Pointer(o)))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case huge == 0 && fellBack > 0:
			// The kernel had no free huge page at those faults (memory
			// fragmented by whatever else runs): what the machine allowed,
			// not a fault of the reserve, which was advised.
			t.Logf("the mapping holding %p has no huge pages: the kernel fell back to small pages %d times meanwhile", o, fellBack)
		case huge == 0:
			t.Errorf("the mapping holding %p has no huge pages (and the kernel reported no fallback to small pages)", o)
		}
	}
}

// hugeAt returns the AnonHugePages of the mapping holding addr, from
// /proc/self/smaps.
func hugeAt(addr uintptr) (int64, error) {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	in := false
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(f[0], "-"); ok && !strings.HasSuffix(f[0], ":") {
			a, err1 := strconv.ParseUint(lo, 16, 64)
			z, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(addr) >= a && uint64(addr) < z
			continue
		}
		if in && f[0] == "AnonHugePages:" && len(f) == 3 {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no mapping in /proc/self/smaps holds %#x", addr)
}

// vmstat returns the kernel's counter name from /proc/vmstat (0 if absent).
func vmstat(t *testing.T, name string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/vmstat")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == name {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// freshEnv marks a test binary that runs one test in a process of its own.
const freshEnv = "ROCELAB_HUGEPAGE_FRESH"

// inFreshProcess runs t's test alone in a new process of this test
// binary and fails t with its output if it fails.
func inFreshProcess(t *testing.T) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), freshEnv+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("in a process of its own:\n%s", out)
	if err != nil {
		t.Fatalf("%s in a process of its own: %v", t.Name(), err)
	}
}
