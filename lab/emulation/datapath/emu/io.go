package emu

import (
	"time"

	"github.com/rocelab/rocelab/core/clock"
)

// PortIO is one port's frame I/O: an AF_PACKET socket (*afpacket.Conn
// implements it) or an in-memory port in tests. The Loop calls it from its
// own goroutine only.
type PortIO interface {
	// ReadBatch reads up to len(bufs) pending frames without blocking,
	// frame i into bufs[i] and its length into lens[i]; it returns 0, nil
	// when nothing is pending.
	ReadBatch(bufs [][]byte, lens []int) (int, error)
	// WriteBatch sends frames in order and returns how many were sent.
	WriteBatch(frames [][]byte) (int, error)
}

// StampedReader is a PortIO that also tells when each frame arrived:
// *afpacket.Conn (the kernel's receive timestamps) and MemPort (the
// injection time) implement it. The Loop delivers a frame to the model at
// the fabric time of its stamp, not at the time of the turn that read it.
type StampedReader interface {
	// ReadBatchStamped is ReadBatch that also sets stamps[i] to frame i's
	// receive time in nanoseconds since the Unix epoch (CLOCK_REALTIME),
	// or 0 when unknown.
	ReadBatchStamped(bufs [][]byte, lens []int, stamps []int64) (int, error)
}

// SyscallCounter is a PortIO that counts the system calls its reads and
// writes made (*afpacket.Conn); the Loop reports them as
// emu_rx_syscalls_total and emu_tx_syscalls_total.
type SyscallCounter interface {
	Syscalls() (rx, tx uint64)
}

// Waiter is how the Loop sleeps: until a port may have frames, Wake is
// called, or the timeout passes. *afpacket.Poller fits it through a
// one-line adapter; MemWaiter is the in-memory one.
type Waiter interface {
	// Wait blocks until a port has frames to read, Wake was called, or
	// timeout passed (negative: no timeout; 0: just look). It appends the
	// indices of the ports with frames to ready[:0].
	Wait(timeout time.Duration, ready []int) ([]int, error)
	// Wake makes the current or next Wait return; any goroutine may call it.
	Wake() error
}

// QuietWaiter is a Waiter that can also sleep without watching the ports,
// so that frames arriving meanwhile wait in their sockets and are read
// together. *afpacket.Poller (through node's adapter) and MemWaiter
// implement it. The Loop sleeps quietly only while nothing it could read
// can be due yet: see the package doc, "Links".
type QuietWaiter interface {
	Waiter
	// WaitQuiet blocks until Wake is called or timeout passes (>= 0),
	// whatever the ports receive, then appends the indices of the ports
	// with frames to ready[:0], as Wait(0, ready) would.
	WaitQuiet(timeout time.Duration, ready []int) ([]int, error)
}

// Port is one port of a Loop.
type Port struct {
	// Name labels the port's telemetry (port=Name), usually the ifname.
	Name string
	IO   PortIO
	// MAC is this port's address, PeerMAC the neighbour's: frames leaving
	// the port are rewritten from MAC to PeerMAC.
	MAC, PeerMAC [6]byte
	// Delay is the link's one-way propagation delay, applied to frames
	// this port receives: a frame is delivered to the model Delay after
	// the kernel stamped its arrival (see the package doc, "Links").
	Delay clock.Duration
	// Keep leaves the descriptors the model sends on this port to the
	// model, whatever Options.Recycle says: an endpoint's NIC owns the
	// frames it builds (a loop shared by switches and endpoints recycles
	// the switches' only).
	Keep bool
	// PeerLoop says the port's neighbour is a Loop too: frames written
	// carry the trailer of trailer.go (how late they were written), and
	// frames read are stripped of theirs and delivered from the time they
	// were sent. A port cabled to a kernel interface leaves it false.
	PeerLoop bool
}
