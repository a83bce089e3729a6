package web

import (
	"context"
	"errors"
	"time"

	"github.com/rocelab/rocelab/dashboards/metrics"
	"github.com/rocelab/rocelab/topologies/graph"
)

// errEnd ends a finite feed (a replay at its last frame).
var errEnd = errors.New("end of recording")

// liveFeed reads a lab every interval and builds frames from consecutive
// readings.
type liveFeed struct {
	src      metrics.Source
	layout   graph.Layout
	interval time.Duration
	prev     *snapshot
	next     time.Time
}

// DefaultInterval is how often a live feed reads the lab (4 updates a
// second) when not told.
const DefaultInterval = 250 * time.Millisecond

// NewLiveFeed returns a feed over src at one frame per interval (0:
// DefaultInterval).
func NewLiveFeed(src metrics.Source, layout graph.Layout, interval time.Duration) Feed {
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &liveFeed{src: src, layout: layout, interval: interval}
}

func (l *liveFeed) Next(ctx context.Context) (Frame, error) {
	if wait := time.Until(l.next); wait > 0 {
		select {
		case <-ctx.Done():
			return Frame{}, ctx.Err()
		case <-time.After(wait):
		}
	}
	l.next = time.Now().Add(l.interval)
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	r, err := l.src.Read(rctx)
	if err != nil {
		return Frame{}, err
	}
	cur := newSnapshot(r, time.Now())
	f := buildFrame(l.layout, l.prev, cur)
	l.prev = cur
	return f, nil
}
