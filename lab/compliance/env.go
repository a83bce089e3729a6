package compliance

import (
	"net/netip"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/adapter"
	"github.com/rocelab/rocelab/endpoint/cmagent"
)

// Env is where a case runs: the wire toward the IUT and the adapter that
// drives it. One Env serves one case.
type Env interface {
	Adapter
	// Send puts a frame on the wire toward the IUT.
	Send(frame []byte) error
	// Next returns the next frame the IUT sent, waiting until the Env's
	// clock reaches deadline; ok is false when none came.
	Next(deadline clock.Time) (f Frame, ok bool, err error)
	// Now is the Env's clock in fabric time (virtual time in-process, the
	// dilated wall clock in emulation).
	Now() clock.Time
	// Jitter is how far the Env's timing may be off, in fabric time: how
	// late beyond its intent the IUT may act and the tester see it (0
	// in process; in emulation the host's scheduling jitter divided by
	// the scale k). Cases widen their timing bounds by it and wait that
	// much longer for answers they expect; checks that something does
	// not happen are not widened.
	Jitter() clock.Duration
	// Peer returns the tester's own addresses.
	Peer() (ip netip.Addr, mac [6]byte)
	// Close releases what the Env holds for the case.
	Close() error
}

// Frame is a frame on the wire between tester and IUT.
type Frame struct {
	At    clock.Time
	Data  []byte
	FromT bool // sent by the tester
}

// Adapter is how the suite drives the IUT: the operations of the adapter
// protocol (docs/compliance.md). Every work request is signaled.
type Adapter interface {
	CreateQP(spec QPSpec) (QPHandle, error)
	Connect(qp int, remote endpoint.ConnInfo) error
	PostSend(qp int, wr WR) error
	PostRecv(qp int, wrid uint64, offset uint64, length uint32) error
	Poll(qp int) ([]Completion, error)
	Query(qp int) (QPStatus, error)
	ReadMem(qp int, offset uint64, n int) ([]byte, error)
	WriteMem(qp int, offset uint64, data []byte) error
	Destroy(qp int) error
	// The CM operations (docs/compliance.md, "The CM operations"): the
	// IUT's Communication Manager with an auto-accepting consumer.
	CMListen(l CMListen) error
	CMConnect(c CMConnect) (CMConnected, error)
	CMEvents() ([]CMEvent, error)
}

// The CM operations' messages (package cmagent, shared with the endpoint
// node).
type (
	CMSpec      = cmagent.Spec
	CMListen    = cmagent.Listen
	CMConnect   = cmagent.Connect
	CMConnected = cmagent.Connected
	CMEvent     = cmagent.Event
)

// TimeoutCounter is what the Env of an IUT on a wall clock also offers:
// how many retransmission timeouts the IUT has had so far, over all its
// QPs. A case plays the peer in real time; if the tester is descheduled
// for as long as the IUT's timeout (200 µs of fabric time is 200 ms of
// wall clock at k = 1000), the IUT's timer fires first and its legitimate
// resend fails a case that expected an answer to the tester's frame. A
// case that fails after a timeout fired is therefore run once more (see
// RunCases), unless timeouts are what it tests (Case.Timeouts); a real
// fault fails both runs.
type TimeoutCounter interface {
	Timeouts() (int64, error)
}

// QPSpec asks the IUT for a QP with a registered buffer the peer may read
// and write.
type QPSpec struct {
	Mode   endpoint.Mode `json:"mode"` // rocev2 or metaroce
	Paths  int           `json:"paths,omitempty"`
	Buffer int           `json:"buffer_bytes"`
	// PSN, if set, is the first PSN the IUT's QP sends (cases that make
	// the IUT's requester cross the wrap).
	PSN *uint32 `json:"psn,omitempty"`
	// Type is rc (default) or ud; QKey a UD QP's Q_Key.
	Type string `json:"type,omitempty"`
	QKey uint32 `json:"qkey,omitempty"`
	// NoRemoteAtomic registers the buffer without remote-atomic access.
	NoRemoteAtomic bool `json:"no_remote_atomic,omitempty"`
}

// QPHandle is a QP the IUT created: Conn is what the tester connects to,
// Buf the registered buffer.
type QPHandle struct {
	ID   int               `json:"id"`
	Conn endpoint.ConnInfo `json:"conn"`
	Buf  Buffer            `json:"buffer"`
}

// Buffer is a registered buffer as the peer addresses it.
type Buffer struct {
	Addr uint64 `json:"addr"`
	RKey uint32 `json:"rkey"`
	Len  int64  `json:"len"`
}

// WR is a send work request: Len bytes at Offset of the QP's own buffer
// (the adapter's, package endpoint/adapter).
type WR = adapter.WR

// Completion is a work completion; Status uses the verbs names (success,
// remote access error, transport retry exceeded, …).
type Completion = adapter.Completion

// QPStatus is a QP's state (RESET, INIT, RTR, RTS, ERROR) and the mode in
// force (rocev2, metaroce).
type QPStatus struct {
	State string        `json:"state"`
	Mode  endpoint.Mode `json:"mode"`
}
