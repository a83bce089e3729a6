package hugepage

import (
	"os"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"
	"time"
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
	f, err := Follow(time.Millisecond)
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
