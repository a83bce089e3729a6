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
	// keepP makes the waits raw system calls (SetKeepProcessor).
	keepP bool
}

// SetKeepProcessor makes Wait and WaitQuiet block in raw system calls,
// which keep the calling goroutine's processor (P) instead of handing
// it to the runtime for the duration. A loop that blocks in ordinary
// system calls thousands of times a second, on one goroutine that never
// yields, has its P taken back by the runtime's monitor (sysmon) every
// 10 ms, and each time the monitor polls every 20 µs for a millisecond
// before it backs off again: on the laptop demo that was a third of the
// node processes' CPU (docs/performance.md). The runtime still preempts
// the goroutine every 10 ms, with a signal that ends the wait early
// (EINTR: the wait goes on for the rest of its timeout, and the
// goroutine is preempted on the way back into it). Keep the processor only for the one loop of a process whose
// GOMAXPROCS leaves another P for everything else (its API, the garbage
// collector, timers): a process whose loops held every P would starve
// the rest until the next preemption.
func (p *Poller) SetKeepProcessor(keep bool) { p.keepP = keep }

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
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	for {
		var n int
		var err error
		if p.pwait2 {
			var ts *unix.Timespec
			if timeout >= 0 {
				t := unix.NsecToTimespec(int64(timeout))
				ts = &t
			}
			call := unix.Syscall6
			if p.keepP {
				call = unix.RawSyscall6
			}
			r, _, errno := call(unix.SYS_EPOLL_PWAIT2, uintptr(p.epfd), uintptr(unsafe.Pointer(&p.events[0])),
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
			// A signal (the runtime preempts goroutines with SIGURG):
			// wait on for the rest of the timeout, not the whole of it
			// again, which signals every 10 ms would make forever.
			if timeout > 0 {
				if timeout = time.Until(deadline); timeout <= 0 {
					return 0, nil
				}
			}
			continue
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
		n, err := p.ppoll(fds, &ts)
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

// ppoll is unix.Ppoll, raw when the Poller keeps its processor.
func (p *Poller) ppoll(fds []unix.PollFd, ts *unix.Timespec) (int, error) {
	if !p.keepP {
		return unix.Ppoll(fds, ts, nil)
	}
	r, _, errno := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)), uintptr(unsafe.Pointer(ts)), 0, 0, 0)
	if errno != 0 {
		return int(r), errno
	}
	return int(r), nil
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
