package metrics

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// countingSource is a Source whose reads take delay and are counted; the
// reading names the read (Lab "1", "2", …), and fail makes reads fail.
type countingSource struct {
	delay time.Duration
	reads atomic.Int32
	fail  atomic.Bool
}

func (c *countingSource) Read(ctx context.Context) (Reading, error) {
	n := c.reads.Add(1)
	select {
	case <-time.After(c.delay):
	case <-ctx.Done():
		return Reading{}, ctx.Err()
	}
	if c.fail.Load() {
		return Reading{}, errors.New("lab gone")
	}
	return Reading{Lab: string(rune('0' + n))}, nil
}

// TestShared: overlapping Reads share one read of the source; a Read
// within maxAge of the last read's start gets its reading; a later one
// reads again; a failed read is not kept; a caller whose ctx ends gives up
// alone, and the shared read goes on for the others.
func TestShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &countingSource{delay: 100 * time.Millisecond}
		s := Shared(src, 250*time.Millisecond, 5*time.Second)
		ctx := t.Context()
		read := func() string {
			r, err := s.Read(ctx)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			return r.Lab
		}

		var wg sync.WaitGroup
		got := make([]string, 3)
		for i := range got {
			wg.Go(func() { got[i] = read() })
		}
		wg.Wait()
		if got[0] != "1" || got[1] != "1" || got[2] != "1" || src.reads.Load() != 1 {
			t.Errorf("three overlapping Reads got %q with %d reads of the source, want one read", got, src.reads.Load())
		}

		time.Sleep(100 * time.Millisecond) // 200 ms after the read started
		if r := read(); r != "1" || src.reads.Load() != 1 {
			t.Errorf("a Read 200 ms after the last read's start got %q (%d reads), want the kept reading", r, src.reads.Load())
		}
		time.Sleep(100 * time.Millisecond) // 300 ms after
		if r := read(); r != "2" {
			t.Errorf("a Read 300 ms after got %q, want a new reading", r)
		}

		time.Sleep(time.Second)
		src.fail.Store(true)
		if _, err := s.Read(ctx); err == nil {
			t.Error("a failed read returned no error")
		}
		src.fail.Store(false)
		if r := read(); r != "4" {
			t.Errorf("the Read after a failed one got %q, want a new reading (errors are not kept)", r)
		}

		time.Sleep(time.Second)
		short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
		defer cancel()
		var other string
		wg.Go(func() { other = read() })
		if _, err := s.Read(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a Read whose ctx ended returned %v, want its deadline", err)
		}
		wg.Wait()
		if other != "5" {
			t.Errorf("the other caller got %q, want the shared read's reading", other)
		}
	})
}

// TestSharedSlowRead: on a busy machine a read of the lab outlasts a
// scrape's deadline; a caller then gets the last reading after half of
// maxAge, and the slow read's reading goes to the next caller.
func TestSharedSlowRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &countingSource{delay: 100 * time.Millisecond}
		s := Shared(src, time.Second, 5*time.Second)
		if r, err := s.Read(t.Context()); err != nil || r.Lab != "1" {
			t.Fatalf("first Read: %q, %v", r.Lab, err)
		}
		src.delay = 3 * time.Second // the machine got busy
		time.Sleep(2 * time.Second)
		start := time.Now()
		if r, err := s.Read(t.Context()); err != nil || r.Lab != "1" || time.Since(start) != 500*time.Millisecond {
			t.Errorf("a Read during a slow read got %q, %v after %v; want the last reading after 500ms", r.Lab, err, time.Since(start))
		}
		time.Sleep(3 * time.Second) // the slow read ends
		if r, err := s.Read(t.Context()); err != nil || r.Lab != "2" {
			t.Errorf("the Read after the slow read got %q, %v; want its reading", r.Lab, err)
		} // (and started read 3, which it did not wait for)
		time.Sleep(10 * time.Second) // the last reading is older than timeout
		start = time.Now()
		if r, err := s.Read(t.Context()); err != nil || r.Lab != "4" || time.Since(start) != 3*time.Second {
			t.Errorf("a Read with no recent reading got %q, %v after %v; want a fresh one after the read", r.Lab, err, time.Since(start))
		}
	})
}
