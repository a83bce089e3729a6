package web

import (
	"context"
	"sync"
)

// Share returns a NewFeed whose feeds all show the frames of one feed made
// by newFeed: however many pages watch a lab, its nodes are read once per
// interval, and not at all while none does (the shared feed starts with
// the first subscriber and stops, its context cancelled, with the last;
// the next subscriber starts a new one). A subscriber that reads slower
// than frames come gets the newest frame and misses the ones between.
// Its Close (the event stream's end) unsubscribes it.
func Share(newFeed func() Feed) func() Feed {
	s := &shared{newFeed: newFeed, subs: map[*subscriber]struct{}{}}
	return s.subscribe
}

type shared struct {
	newFeed func() Feed
	mu      sync.Mutex
	subs    map[*subscriber]struct{}
	stop    context.CancelFunc // of the running feed; nil when none runs
}

// result is one frame of the shared feed, or its error.
type result struct {
	f   Frame
	err error
}

type subscriber struct {
	s  *shared
	ch chan result // the newest result not yet read
}

func (s *shared) subscribe() Feed {
	sub := &subscriber{s: s, ch: make(chan result, 1)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs[sub] = struct{}{}
	if s.stop == nil {
		ctx, cancel := context.WithCancel(context.Background())
		s.stop = cancel
		go s.run(ctx, s.newFeed())
	}
	return sub
}

// run hands every result of feed to the subscribers until ctx ends.
func (s *shared) run(ctx context.Context, feed Feed) {
	for {
		f, err := feed.Next(ctx)
		s.mu.Lock()
		if ctx.Err() != nil {
			// Stopped, under the lock: a subscriber that came meanwhile
			// belongs to the next feed, not to this one's last frame.
			s.mu.Unlock()
			return
		}
		for sub := range s.subs {
			sub.offer(result{f, err})
		}
		s.mu.Unlock()
	}
}

// offer replaces any unread result with r (the shared goroutine is the
// only sender, so the second send cannot block).
func (sub *subscriber) offer(r result) {
	select {
	case sub.ch <- r:
	default:
		select {
		case <-sub.ch:
		default:
		}
		sub.ch <- r
	}
}

// Next returns the next frame of the shared feed.
func (sub *subscriber) Next(ctx context.Context) (Frame, error) {
	select {
	case r := <-sub.ch:
		return r.f, r.err
	case <-ctx.Done():
		return Frame{}, ctx.Err()
	}
}

// Close unsubscribes; the last one out stops the shared feed.
func (sub *subscriber) Close() error {
	s := sub.s
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.subs, sub)
	if len(s.subs) == 0 && s.stop != nil {
		s.stop()
		s.stop = nil
	}
	return nil
}
