package web

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"
)

// tickFeed makes one frame per token on tick, numbered in FabricTime
// (token false: an error instead), and counts the feeds made, the frames
// made, the calls of Next and those waiting for a token.
type tickFeed struct {
	tick                         chan bool
	made, frames, calls, waiting *atomic.Int32
}

func (f *tickFeed) Next(ctx context.Context) (Frame, error) {
	f.calls.Add(1)
	f.waiting.Add(1)
	select {
	case <-ctx.Done():
		f.waiting.Add(-1)
		return Frame{}, ctx.Err()
	case ok := <-f.tick:
		f.waiting.Add(-1)
		if !ok {
			return Frame{}, errors.New("node sw1 does not answer")
		}
		return Frame{FabricTime: float64(f.frames.Add(1))}, nil
	}
}

// ticker is a shared tickFeed the test drives frame by frame.
type ticker struct {
	tick                         chan bool
	made, frames, calls, waiting atomic.Int32
	newFeed                      func() Feed
}

func newTicker() *ticker {
	tk := &ticker{tick: make(chan bool)}
	tk.newFeed = Share(func() Feed {
		tk.made.Add(1)
		return &tickFeed{tick: tk.tick, made: &tk.made, frames: &tk.frames, calls: &tk.calls, waiting: &tk.waiting}
	})
	return tk
}

// step makes one frame (or error) and waits until every subscriber has
// been offered it: the shared feed has called Next again.
func (tk *ticker) step(t *testing.T, ok bool) {
	t.Helper()
	waitFor(t, func() bool { return tk.waiting.Load() == 1 }) // it has counted itself
	calls := tk.calls.Load()
	tk.tick <- ok
	waitFor(t, func() bool { return tk.calls.Load() > calls })
}

func next(t *testing.T, f Feed) (Frame, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	return f.Next(ctx)
}

// TestShareReadsOnce: three subscribers see every frame, while the lab is
// read once per frame, not once per subscriber.
func TestShareReadsOnce(t *testing.T) {
	tk := newTicker()
	subs := []Feed{tk.newFeed(), tk.newFeed(), tk.newFeed()}
	for k := 1; k <= 5; k++ {
		tk.step(t, true)
		for i, s := range subs {
			if f, err := next(t, s); err != nil || f.FabricTime != float64(k) {
				t.Errorf("frame %d, subscriber %d: got %v, %v", k, i, f.FabricTime, err)
			}
		}
	}
	for _, s := range subs {
		s.(io.Closer).Close()
	}
	if tk.made.Load() != 1 || tk.frames.Load() != 5 {
		t.Errorf("%d feeds made and %d frames read for 3 subscribers of 5 frames, want 1 and 5", tk.made.Load(), tk.frames.Load())
	}
}

// TestShareStopsAndRestarts: the shared feed stops when the last
// subscriber leaves (nothing waits to read the lab) and a new subscriber
// starts a new one.
func TestShareStopsAndRestarts(t *testing.T) {
	tk := newTicker()
	a, b := tk.newFeed(), tk.newFeed()
	tk.step(t, true)
	a.(io.Closer).Close()
	tk.step(t, true)
	if f, err := next(t, b); err != nil || f.FabricTime != 2 {
		t.Errorf("after one of two left: %v, %v", f.FabricTime, err)
	}
	b.(io.Closer).Close()
	waitFor(t, func() bool { return tk.waiting.Load() == 0 })
	c := tk.newFeed()
	defer c.(io.Closer).Close()
	tk.step(t, true)
	if f, err := next(t, c); err != nil || f.FabricTime != 3 {
		t.Errorf("new subscriber: %v, %v", f.FabricTime, err)
	}
	if tk.made.Load() != 2 {
		t.Errorf("%d feeds made, want 2 (one per run of subscribers)", tk.made.Load())
	}
}

// TestShareErrorsAndSlowReaders: an error reaches every subscriber, and a
// subscriber that does not read holds up nobody and then gets the newest
// result only.
func TestShareErrorsAndSlowReaders(t *testing.T) {
	tk := newTicker()
	slow, fast := tk.newFeed(), tk.newFeed()
	defer slow.(io.Closer).Close()
	defer fast.(io.Closer).Close()
	for k := 1; k <= 10; k++ {
		tk.step(t, k != 4)
		_, err := next(t, fast)
		if (err != nil) != (k == 4) {
			t.Errorf("step %d: error %v", k, err)
		}
	}
	if f, err := next(t, slow); err != nil || f.FabricTime != 9 {
		t.Errorf("slow subscriber: %v, %v; want frame 9, the newest", f.FabricTime, err)
	}
}

// TestCloseEndsWaitingNext: Next returns when its context ends.
func TestCloseEndsWaitingNext(t *testing.T) {
	tk := newTicker()
	f := tk.newFeed()
	defer f.(io.Closer).Close()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := f.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Next: %v, want the context's deadline", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 5 s")
}
