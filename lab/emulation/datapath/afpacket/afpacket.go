package afpacket

import (
	"errors"
	"time"
)

// Config tunes a Conn. The zero value is a switch port's configuration.
type Config struct {
	// NoPromisc leaves promiscuous mode off.
	NoPromisc bool
	// SeeOutgoing reads the socket's own transmissions too (no
	// PACKET_IGNORE_OUTGOING).
	SeeOutgoing bool
	// NoTimestamps turns the kernel's receive timestamps off
	// (SO_TIMESTAMPNS); ReadBatchStamped then returns 0 stamps.
	NoTimestamps bool
	// QdiscBypass sends with PACKET_QDISC_BYPASS: faster, but other
	// sockets on the sending interface (tcpdump) no longer see the frames
	// sent (the receiving end still does).
	QdiscBypass bool
	// RcvBuf and SndBuf are the socket buffer sizes in bytes
	// (0 = 4 MiB each).
	RcvBuf, SndBuf int
	// MaxBatch caps how many frames one ReadBatch or WriteBatch system
	// call moves (0 = 64).
	MaxBatch int
	// RxRing, when > 0, receives through a memory-mapped ring of about
	// that many bytes (PACKET_RX_RING, TPACKET_V2) instead of recvmmsg:
	// a read is a copy out of shared memory, with no system call. The
	// ring's memory is the kernel's, allocated when the Conn opens, and
	// replaces the receive buffer (RcvBuf): a frame that finds the ring
	// full is dropped and counted in KernelDrops. Slots are sized for the
	// interface's MTU when the Conn opens; a longer frame is cut and
	// counted in Truncated.
	RxRing int
}

func (c *Config) withDefaults() Config {
	var cfg Config
	if c != nil {
		cfg = *c
	}
	if cfg.RcvBuf == 0 {
		cfg.RcvBuf = 4 << 20
	}
	if cfg.SndBuf == 0 {
		cfg.SndBuf = 4 << 20
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 64
	}
	return cfg
}

// Stats counts a Conn's traffic.
type Stats struct {
	// RxFrames and TxFrames are frames read and sent by this Conn.
	RxFrames, TxFrames uint64
	// RxBytes and TxBytes are their bytes.
	RxBytes, TxBytes uint64
	// Truncated counts frames longer than the buffer they were read into.
	Truncated uint64
	// TxDropped counts frames the kernel refused on send (ENOBUFS: the
	// receiving end's backlog was full) — a drop on the wire.
	TxDropped uint64
	// KernelDrops counts frames the kernel dropped because the socket's
	// receive buffer was full (PACKET_STATISTICS), since the last Stats.
	KernelDrops uint64
	// RxSyscalls and TxSyscalls count the system calls reads and writes
	// made (recvmmsg; sendmmsg or the send that flushes a ring).
	RxSyscalls, TxSyscalls uint64
}

// ErrClosed is returned by operations on a closed Conn or Poller.
var ErrClosed = errors.New("afpacket: closed")

// Forever makes Poller.Wait and Conn.Wait block without a timeout.
const Forever = time.Duration(-1)
