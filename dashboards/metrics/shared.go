package metrics

import (
	"context"
	"sync"
	"time"
)

// Shared returns a Source that reads src at most once per maxAge: a Read
// that starts within maxAge of the start of the last successful read gets
// that reading, and Reads that overlap share one read of src, which runs
// for at most timeout whatever its callers do (each caller still gives up
// when its own ctx ends). A dashboard's live web view and its /metrics read
// the lab through one Shared source, so that a Prometheus scrape while the
// page is open costs no second read of every node: reading a switch's
// telemetry takes its loop's time, and during an incast on a busy machine
// the two readers together made scrapes miss a 1 s timeout. A read that
// takes longer than half of maxAge gives its callers the last reading
// (if it is younger than timeout) instead of holding them.
func Shared(src Source, maxAge, timeout time.Duration) Source {
	return &shared{src: src, maxAge: maxAge, timeout: timeout}
}

type shared struct {
	src             Source
	maxAge, timeout time.Duration

	mu      sync.Mutex
	last    Reading
	lastAt  time.Time // when the read that gave last started; zero: none
	pending *sharedRead
}

// sharedRead is one read of the source, which every Read that overlaps it
// waits for.
type sharedRead struct {
	done chan struct{}
	r    Reading
	err  error
}

func (s *shared) Read(ctx context.Context) (Reading, error) {
	s.mu.Lock()
	if !s.lastAt.IsZero() && time.Since(s.lastAt) < s.maxAge {
		r := s.last
		s.mu.Unlock()
		return r, nil
	}
	p := s.pending
	if p == nil {
		p = &sharedRead{done: make(chan struct{})}
		s.pending = p
		go s.read(p, time.Now())
	}
	// A read that outlasts half of maxAge (a busy machine: every node's
	// loop answers late) does not hold the caller: it gets the last
	// reading, if that is younger than timeout, and the read goes on for
	// the next caller. A scrape with a deadline of maxAge then gets data.
	var stale <-chan time.Time
	last, lastAt := s.last, s.lastAt
	if !lastAt.IsZero() && time.Since(lastAt) < s.timeout {
		t := time.NewTimer(s.maxAge / 2)
		defer t.Stop()
		stale = t.C
	}
	s.mu.Unlock()
	select {
	case <-p.done:
		return p.r, p.err
	case <-stale:
		return last, nil
	case <-ctx.Done():
		return Reading{}, ctx.Err()
	}
}

// read reads the source for p, started at start, and keeps the reading
// if it succeeded.
func (s *shared) read(p *sharedRead, start time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	p.r, p.err = s.src.Read(ctx)
	s.mu.Lock()
	if p.err == nil {
		s.last, s.lastAt = p.r, start
	}
	s.pending = nil
	s.mu.Unlock()
	close(p.done)
}
