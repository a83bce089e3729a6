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
