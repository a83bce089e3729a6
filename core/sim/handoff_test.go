package sim

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocelab/rocelab/core/clock"
)

// TestHandoff: workers run every window exactly once, with its bound, and
// the group's goroutine goes on only once all of them finished it; windows
// that follow at once (spinning), windows after a pause longer than
// spinFor (parked workers woken) and a handoff that never spins (fewer
// processors than goroutines) alike; close ends the workers.
func TestHandoff(t *testing.T) {
	for _, spin := range []bool{true, false} {
		h := newHandoff(3)
		h.spin = spin
		var ran [3]atomic.Int64 // per worker: windows run
		var wg sync.WaitGroup
		for i := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var gen uint64
				for {
					g, bound, ok := h.next(i, gen)
					if !ok {
						return
					}
					if g != gen+1 || uint64(bound.at) != g {
						t.Errorf("worker %d: window %d (bound %d) after %d", i, g, bound.at, gen)
					}
					gen = g
					if i == 1 && g%5 == 0 {
						time.Sleep(200 * time.Microsecond) // a slow worker
					}
					ran[i].Add(1)
					h.finish()
				}
			}()
		}
		for w := uint64(1); w <= 40; w++ {
			if w%10 == 0 {
				time.Sleep(2 * spinFor) // the workers park
			}
			h.start(key{at: clock.Time(w)})
			h.awaitWorkers()
			for i := range ran {
				if got := ran[i].Load(); got != int64(w) {
					t.Fatalf("spin %v: after window %d, worker %d ran %d", spin, w, i, got)
				}
			}
		}
		h.close()
		wg.Wait()
	}
}
