package afpacket

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Poller waits until one of several Conns has frames to read, a timeout
// passes, or another goroutine calls Wake. It is epoll (level-triggered)
// plus an eventfd. Wait is called by one goroutine; Wake by any.
type Poller struct {
	epfd, evfd int
	events     []unix.EpollEvent
	mu         sync.Mutex
	closed     bool
	pwait2     bool
}

// wakeID is the epoll user data of the eventfd; Conn IDs are >= 0.
const wakeID = -1

// NewPoller returns an empty Poller.
func NewPoller() (*Poller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("afpacket: epoll_create1: %w", err)
	}
	evfd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("afpacket: eventfd: %w", err)
	}
	p := &Poller{epfd: epfd, evfd: evfd, events: make([]unix.EpollEvent, 64), pwait2: true}
	if err := p.add(evfd, wakeID); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func (p *Poller) add(fd, id int) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(id)}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("afpacket: epoll_ctl add: %w", err)
	}
	return nil
}

// Add watches c for readable frames; Wait reports it as id (id >= 0).
func (p *Poller) Add(c *Conn, id int) error {
	if id < 0 {
		return fmt.Errorf("afpacket: poller id %d < 0", id)
	}
	if c.fd < 0 {
		return ErrClosed
	}
	return p.add(c.fd, id)
}

// Remove stops watching c.
func (p *Poller) Remove(c *Conn) error {
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, c.fd, nil); err != nil {
		return fmt.Errorf("afpacket: epoll_ctl del: %w", err)
	}
	return nil
}

// Wait blocks until at least one watched Conn is readable, Wake is
// called, or timeout passes (Forever: no timeout; 0: just look). It
// appends the IDs of the readable Conns to ready[:0] and returns it, and
// reports whether it was woken. Timeouts have nanosecond resolution
// (epoll_pwait2; millisecond, rounded up, on kernels before 5.11).
func (p *Poller) Wait(timeout time.Duration, ready []int) ([]int, bool, error) {
	ready = ready[:0]
	n, err := p.wait(timeout)
	if err != nil {
		return ready, false, err
	}
	woken := false
	for _, ev := range p.events[:n] {
		if ev.Fd == wakeID {
			woken = true
			var b [8]byte
			unix.Read(p.evfd, b[:]) // reset the counter
			continue
		}
		ready = append(ready, int(ev.Fd))
	}
	return ready, woken, nil
}

func (p *Poller) wait(timeout time.Duration) (int, error) {
	for {
		var n int
		var err error
		if p.pwait2 {
			var ts *unix.Timespec
			if timeout >= 0 {
				t := unix.NsecToTimespec(int64(timeout))
				ts = &t
			}
			r, _, errno := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(p.epfd), uintptr(unsafe.Pointer(&p.events[0])),
				uintptr(len(p.events)), uintptr(unsafe.Pointer(ts)), 0, 0)
			n = int(r)
			if errno == unix.ENOSYS {
				p.pwait2 = false
				continue
			}
			if errno != 0 {
				err = errno
			}
		} else {
			ms := -1
			if timeout >= 0 {
				ms = int((timeout + time.Millisecond - 1) / time.Millisecond)
			}
			n, err = unix.EpollWait(p.epfd, p.events, ms)
		}
		if errors.Is(err, unix.EINTR) {
			continue // the caller recomputes its timeout on the next turn
		}
		if err != nil {
			if errors.Is(err, unix.EBADF) {
				return 0, ErrClosed
			}
			return 0, fmt.Errorf("afpacket: epoll wait: %w", err)
		}
		return n, nil
	}
}

// WaitQuiet blocks until Wake is called or timeout (>= 0) passes, whether
// or not the watched Conns receive frames, then returns what Wait(0)
// would: a loop that knows no frame can be due for a while reads
// everything that arrived meanwhile in one turn.
func (p *Poller) WaitQuiet(timeout time.Duration, ready []int) ([]int, bool, error) {
	// A signal (the Go runtime preempts goroutines with SIGURG) ends a
	// ppoll early with EINTR: sleep on for the rest of the timeout.
	deadline := time.Now().Add(timeout)
	for left := timeout; left > 0; left = time.Until(deadline) {
		fds := []unix.PollFd{{Fd: int32(p.evfd), Events: unix.POLLIN}}
		ts := unix.NsecToTimespec(int64(left))
		n, err := unix.Ppoll(fds, &ts, nil)
		if err == nil {
			if n > 0 {
				break // woken
			}
			continue // timed out: left is now ≤ 0
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EBADF) {
			return ready[:0], false, ErrClosed
		}
		return ready[:0], false, fmt.Errorf("afpacket: ppoll: %w", err)
	}
	return p.Wait(0, ready)
}

// Wake makes a Wait that is blocked (or the next one) return at once.
func (p *Poller) Wake() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], 1)
	if _, err := unix.Write(p.evfd, b[:]); err != nil && !errors.Is(err, unix.EAGAIN) {
		return fmt.Errorf("afpacket: wake: %w", err)
	}
	return nil
}

// Close releases the Poller (not the Conns). Wait must have returned.
func (p *Poller) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	p.closed = true
	return errors.Join(unix.Close(p.evfd), unix.Close(p.epfd))
}

// Wait blocks until c has a frame to read or timeout passes (Forever: no
// timeout), and reports whether a frame is pending. A single-port loop
// can use it instead of a Poller.
func (c *Conn) Wait(timeout time.Duration) (bool, error) {
	if c.fd < 0 {
		return false, ErrClosed
	}
	fds := []unix.PollFd{{Fd: int32(c.fd), Events: unix.POLLIN}}
	var ts *unix.Timespec
	if timeout >= 0 {
		t := unix.NsecToTimespec(int64(timeout))
		ts = &t
	}
	for {
		n, err := unix.Ppoll(fds, ts, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("afpacket: ppoll: %w", err)
		}
		return n > 0 && fds[0].Revents&unix.POLLIN != 0, nil
	}
}
