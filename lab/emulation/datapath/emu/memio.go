package emu

import (
	"sync"
	"time"
)

// MemWaiter is an in-memory Waiter for MemPorts: the Loop's I/O without
// sockets, for tests (it works under testing/synctest, whose fake clock
// drives its timer) and in-process labs.
type MemWaiter struct {
	sig  chan struct{} // frames injected or Wake
	wake chan struct{} // Wake only

	mu    sync.Mutex
	ports []*MemPort
	timer *time.Timer
}

// NewMemWaiter returns a MemWaiter with no ports.
func NewMemWaiter() *MemWaiter {
	return &MemWaiter{sig: make(chan struct{}, 1), wake: make(chan struct{}, 1)}
}

// NewPort adds a port; the Loop must list the ports in the order they
// were added (the first is port 0).
func (w *MemWaiter) NewPort() *MemPort {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := &MemPort{w: w, id: len(w.ports)}
	w.ports = append(w.ports, p)
	return p
}

func (w *MemWaiter) signal() {
	select {
	case w.sig <- struct{}{}:
	default:
	}
}

// Wake makes the current or next Wait or WaitQuiet return.
func (w *MemWaiter) Wake() error {
	w.signal()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return nil
}

var _ QuietWaiter = (*MemWaiter)(nil)

// WaitQuiet implements QuietWaiter.
func (w *MemWaiter) WaitQuiet(timeout time.Duration, ready []int) ([]int, error) {
	if timeout > 0 {
		if w.timer == nil {
			w.timer = time.NewTimer(timeout)
		} else {
			w.timer.Reset(timeout)
		}
		select {
		case <-w.wake:
		case <-w.timer.C:
		}
		w.timer.Stop()
	}
	return w.Wait(0, ready)
}

// Wait implements Waiter.
func (w *MemWaiter) Wait(timeout time.Duration, ready []int) ([]int, error) {
	ready = ready[:0]
	look := func() []int {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, p := range w.ports {
			p.mu.Lock()
			if len(p.in) > 0 {
				ready = append(ready, p.id)
			}
			p.mu.Unlock()
		}
		return ready
	}
	if ready = look(); len(ready) > 0 || timeout == 0 {
		return ready, nil
	}
	var tc <-chan time.Time
	if timeout > 0 {
		if w.timer == nil {
			w.timer = time.NewTimer(timeout)
		} else {
			w.timer.Reset(timeout)
		}
		defer w.timer.Stop()
		tc = w.timer.C
	}
	select {
	case <-w.sig:
	case <-tc:
	}
	return look(), nil
}

var _ StampedReader = (*MemPort)(nil)

// MemPort is an in-memory PortIO: Inject queues frames for the Loop to
// read, and what the Loop writes is recorded (Written) or handed to the
// port joined with Join.
type MemPort struct {
	w       *MemWaiter
	id      int
	mu      sync.Mutex
	in      [][]byte
	stamps  []int64 // Unix ns of each frame of in
	written []Written
	peer    *MemPort
}

// Written is a frame the Loop wrote, with the wall-clock time it did.
type Written struct {
	At    time.Time
	Frame []byte
}

// Join makes what a writes arrive at b and the other way round (a
// cable between two Loops). Written frames are still recorded.
func Join(a, b *MemPort) {
	a.mu.Lock()
	a.peer = b
	a.mu.Unlock()
	b.mu.Lock()
	b.peer = a
	b.mu.Unlock()
}

// Inject queues copies of frames for the Loop to read, as if the
// neighbour had just sent them (all at once: one read can take them all);
// they are stamped with the time of the call.
func (p *MemPort) Inject(frames ...[]byte) { p.InjectAt(time.Now(), frames...) }

// InjectAt is Inject with the frames stamped as received at at (the
// Loop delivers them the link's delay after at's fabric time, if it has
// not run past that).
func (p *MemPort) InjectAt(at time.Time, frames ...[]byte) {
	ns := at.UnixNano()
	p.mu.Lock()
	for _, f := range frames {
		p.in = append(p.in, append([]byte(nil), f...))
		p.stamps = append(p.stamps, ns)
	}
	p.mu.Unlock()
	p.w.signal()
}

// Written returns the frames written so far and forgets them.
func (p *MemPort) Written() []Written {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.written
	p.written = nil
	return out
}

// ReadBatch implements PortIO.
func (p *MemPort) ReadBatch(bufs [][]byte, lens []int) (int, error) {
	return p.ReadBatchStamped(bufs, lens, nil)
}

// ReadBatchStamped implements StampedReader: stamps are the injection
// times.
func (p *MemPort) ReadBatchStamped(bufs [][]byte, lens []int, stamps []int64) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := min(len(bufs), len(p.in))
	for i := range n {
		lens[i] = copy(bufs[i], p.in[i])
		if stamps != nil {
			stamps[i] = p.stamps[i]
		}
	}
	p.in = p.in[:copy(p.in, p.in[n:])]
	p.stamps = p.stamps[:copy(p.stamps, p.stamps[n:])]
	return n, nil
}

// WriteBatch implements PortIO.
func (p *MemPort) WriteBatch(frames [][]byte) (int, error) {
	now := time.Now()
	p.mu.Lock()
	peer := p.peer
	for _, f := range frames {
		p.written = append(p.written, Written{At: now, Frame: append([]byte(nil), f...)})
	}
	p.mu.Unlock()
	if peer != nil {
		peer.Inject(frames...)
	}
	return len(frames), nil
}
