package live

import (
	"fmt"
	"sync"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/datapath/afpacket"
)

// wire is the tester's end of the veth: a goroutine drains the socket
// into a queue of frames with their kernel receive stamps, so that a
// burst (4096 frames of req/window) never overflows the socket while a
// case is busy elsewhere.
type wire struct {
	conn *afpacket.Conn
	mu   sync.Mutex
	q    []rxFrame
	err  error
	// through (Unix ns): every frame the kernel received before it is in
	// q (or was popped). A pass of the reader that began at T and left the
	// socket empty moves it to T.
	through int64
	signal  chan struct{} // cap 1: something was queued, read through or failed
	done    chan struct{}
	ended   chan struct{}
}

// rxFrame is a frame from the IUT and when it arrived (Unix ns).
type rxFrame struct {
	at   int64
	data []byte
}

func openWire(ns, ifname string) (*wire, error) {
	c, err := afpacket.Open(ns, ifname, &afpacket.Config{RcvBuf: 32 << 20})
	if err != nil {
		return nil, fmt.Errorf("tester port: %w", err)
	}
	w := &wire{conn: c, signal: make(chan struct{}, 1), done: make(chan struct{}), ended: make(chan struct{})}
	go w.run()
	return w, nil
}

func (w *wire) run() {
	defer close(w.ended)
	const batch = 64
	bufs, lens, stamps := make([][]byte, batch), make([]int, batch), make([]int64, batch)
	for i := range bufs {
		bufs[i] = make([]byte, 9300)
	}
	for {
		select {
		case <-w.done:
			return
		default:
		}
		// A short wait, so that a pass ends soon after any instant:
		// waitThrough's callers wait for one.
		start := time.Now().UnixNano()
		ready, err := w.conn.Wait(2 * time.Millisecond)
		drained := err == nil && !ready
		if err == nil && ready {
			var n int
			n, err = w.conn.ReadBatchStamped(bufs, lens, stamps)
			drained = err == nil && n > 0 && n < batch
			now := time.Now().UnixNano()
			w.mu.Lock()
			for i := range n {
				at := stamps[i]
				if at == 0 {
					at = now // the kernel had not started stamping yet
				}
				w.q = append(w.q, rxFrame{at: at, data: append([]byte(nil), bufs[i][:lens[i]]...)})
			}
			w.mu.Unlock()
		}
		w.mu.Lock()
		if err != nil {
			w.err = fmt.Errorf("tester port: %w", err)
		}
		if drained {
			w.through = start
		}
		w.mu.Unlock()
		select {
		case w.signal <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// waitThrough waits until every frame the kernel received before until
// (Unix ns) is queued, the reader failed, or limit passed; it reports
// whether they are. A frame stamped just before a deadline may still be
// in the socket when the deadline passes, and on a loaded machine the
// reader can be descheduled for tens of milliseconds.
func (w *wire) waitThrough(until int64, limit time.Duration) bool {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		w.mu.Lock()
		through, err := w.through, w.err
		w.mu.Unlock()
		if through >= until {
			return true
		}
		if err != nil {
			return false
		}
		select {
		case <-w.signal:
		case <-timer.C:
			return false
		case <-w.ended:
			return false
		}
	}
}

// pop returns the oldest queued frame if it arrived at or before until
// (Unix ns).
func (w *wire) pop(until int64) (rxFrame, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.q) == 0 || w.q[0].at > until {
		return rxFrame{}, false
	}
	f := w.q[0]
	w.q = w.q[1:]
	return f, true
}

// discard drops every queued frame.
func (w *wire) discard() {
	w.mu.Lock()
	w.q = nil
	w.mu.Unlock()
}

func (w *wire) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *wire) send(frame []byte) error {
	n, err := w.conn.WriteBatch([][]byte{frame})
	if err == nil && n != 1 {
		err = fmt.Errorf("the kernel refused the frame")
	}
	if err != nil {
		return fmt.Errorf("tester port: %w", err)
	}
	return nil
}

func (w *wire) close() error {
	close(w.done)
	<-w.ended
	return w.conn.Close()
}
