//go:build !linux

package afpacket

import (
	"errors"
	"net"
	"time"
)

var errUnsupported = errors.New("afpacket: only implemented on Linux")

// Conn is an AF_PACKET socket bound to one interface.
type Conn struct{}

// Open opens an AF_PACKET socket on interface ifname of namespace ns.
func Open(ns, ifname string, cfg *Config) (*Conn, error) { return nil, errUnsupported }

// Interface is the name of the interface the Conn is bound to.
func (c *Conn) Interface() string { return "" }

// HardwareAddr is the MAC of the interface.
func (c *Conn) HardwareAddr() net.HardwareAddr { return nil }

// Close closes the socket.
func (c *Conn) Close() error { return errUnsupported }

// ReadBatch reads pending frames.
func (c *Conn) ReadBatch(bufs [][]byte, lens []int) (int, error) { return 0, errUnsupported }

// ReadBatchStamped reads pending frames and their receive times.
func (c *Conn) ReadBatchStamped(bufs [][]byte, lens []int, stamps []int64) (int, error) {
	return 0, errUnsupported
}

// WriteBatch sends frames.
func (c *Conn) WriteBatch(frames [][]byte) (int, error) { return 0, errUnsupported }

// Stats returns the Conn's counters.
func (c *Conn) Stats() Stats { return Stats{} }

// Syscalls returns 0, 0.
func (c *Conn) Syscalls() (rx, tx uint64) { return 0, 0 }

// Wait blocks until c has a frame to read or timeout passes.
func (c *Conn) Wait(timeout time.Duration) (bool, error) { return false, errUnsupported }

// Poller waits on several Conns.
type Poller struct{}

// NewPoller returns an empty Poller.
func NewPoller() (*Poller, error) { return nil, errUnsupported }

// Add watches c.
func (p *Poller) Add(c *Conn, id int) error { return errUnsupported }

// Remove stops watching c.
func (p *Poller) Remove(c *Conn) error { return errUnsupported }

// Wait blocks until a Conn is readable, Wake is called or timeout passes.
func (p *Poller) Wait(timeout time.Duration, ready []int) ([]int, bool, error) {
	return ready[:0], false, errUnsupported
}

// Wake makes Wait return.
func (p *Poller) Wake() error { return errUnsupported }

// Close releases the Poller.
func (p *Poller) Close() error { return errUnsupported }

// SetKeepProcessor does nothing.
func (p *Poller) SetKeepProcessor(bool) {}
