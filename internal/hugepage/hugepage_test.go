package hugepage

import (
	"os"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestAnonRegions(t *testing.T) {
	maps := []byte(`00400000-004ab000 r-xp 00000000 fe:00 10151112   /tmp/exe
00599000-005cf000 rw-p 00000000 00:00 0
3b8298000000-3b829ac00000 ---p 00000000 00:00 0
3b829ac00000-3b82a7800000 rw-p 00000000 00:00 0
7fd192900000-7fd194a00000 rw-p 00000000 00:00 0                          [anon: Go: heap]
7fd192900000-7fd194a00000 rw-p 00000000 fe:00 77                          /data/file
7ffe1fa6c000-7ffe1fc8d000 rw-p 00000000 00:00 0                          [stack]
`)
	got, err := anonRegions(maps)
	if err != nil {
		t.Fatal(err)
	}
	want := []region{{0x3b829ac00000, 0x3b82a7800000}, {0x7fd192a00000, 0x7fd194a00000}}
	if len(got) != len(want) {
		t.Fatalf("got %x, want %x", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("region %d: got %x, want %x", i, got[i], want[i])
		}
	}
	if _, err := anonRegions([]byte("zz-1 rw-p 0 0 0\n")); err == nil {
		t.Error("a bad address parsed")
	}
}

// TestAdviseCollapses: small objects filling 64 MiB end up on huge pages
// after Advise(true) where the kernel has transparent huge pages; where it
// has them off ("never") or not at all, nothing is collapsed and the run
// goes on on default pages.
func TestAdviseCollapses(t *testing.T) {
	setting, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	available := err == nil && !strings.Contains(string(setting), "[never]")
	keep := make([]*[256]byte, 0, 256<<10)
	for range cap(keep) {
		o := new([256]byte)
		o[0] = 1
		keep = append(keep, o)
	}
	r, err := Advise(true)
	t.Logf("THP %q: %+v, %v", strings.TrimSpace(string(setting)), r, err)
	switch {
	case available && err != nil:
		t.Fatal(err)
	case available && (r.Regions == 0 || r.Bytes < 64<<20):
		t.Errorf("%d regions of %d bytes advised, want the 64 MiB just allocated", r.Regions, r.Bytes)
	case available && r.Huge+int64(r.Short)*(2<<20) < 32<<20:
		t.Errorf("only %d bytes on huge pages after collapsing %d (%d collapses refused)", r.Huge, r.Bytes, r.Short)
	case available && r.Huge < 32<<20:
		// The shortfall is accounted for by refusals of the moment (no free
		// huge page while other tests hold memory, a page pinned): what the
		// machine allowed, not a fault of Advise.
		t.Logf("only %d bytes on huge pages: %d collapses refused", r.Huge, r.Short)
	case !available && r.Huge > 0:
		t.Errorf("%d bytes on huge pages with THP off", r.Huge)
	}
	_ = keep[len(keep)-1]
}

// TestAdviseBytes: a buffer advised before it is touched faults in on
// huge pages: the mapping holding it gains at least the advised bytes
// less a huge page of AnonHugePages as its pages are first written.
func TestAdviseBytes(t *testing.T) {
	setting, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(setting), "[never]") {
		t.Logf("transparent huge pages are off here (%q): nothing to advise", strings.TrimSpace(string(setting)))
		return
	}
	if n, err := AdviseBytes(make([]byte, 1<<20)); n != 0 || err != nil {
		t.Errorf("a 1 MiB buffer: advised %d bytes (%v), want none", n, err)
	}
	// A mapping of its own, never touched: a buffer on the Go heap may
	// land on memory an earlier test used, whose page tables are there
	// already, and a fault then maps small pages whatever the advice
	// (CI saw the mapping gain nothing, and 4 of 14 MiB after
	// debug.FreeOSMemory).
	b, err := unix.Mmap(-1, 0, 16<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(b)
	n, err := AdviseBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	if n < 12<<20 {
		t.Errorf("advised %d bytes of a 16 MiB buffer, want its whole huge pages (at least 12 MiB)", n)
	}
	mid := uintptr(unsafe.Pointer(&b[len(b)/2]))
	before, err := hugeAt(mid)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	after, err := hugeAt(mid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("advised %d MiB; the mapping's huge pages %d → %d MiB", n>>20, before>>20, after>>20)
	if after-before < int64(n)-2<<20 {
		t.Errorf("the mapping's huge pages grew by %d MiB as %d MiB of advised buffer was touched", (after-before)>>20, n>>20)
	}
}
