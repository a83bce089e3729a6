// Package adapter is the compliance adapter's verbs on the reference
// endpoint (docs/compliance.md): a QP with one registered buffer, driven by
// operations named as on the adapter's wire ("send", "write_imm", …) at
// byte offsets into that buffer, and the adapter's request and completion
// types. The node's HTTP adapter and the in-process IUT both run on it, so
// that both accept, check and refuse the same things.
package adapter

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/rocelab/rocelab/endpoint"
)

// WR is a signaled send work request: Len bytes at Offset of the QP's own
// buffer; RemoteAddr and RKey for RDMA WRITE and READ.
type WR struct {
	WRID       uint64 `json:"wr_id"`
	Op         string `json:"op"` // send, send_imm, write, write_imm, read, cmp_swap, fetch_add
	Offset     uint64 `json:"offset"`
	Len        uint32 `json:"len"`
	RemoteAddr uint64 `json:"remote_addr,omitempty"`
	RKey       uint32 `json:"rkey,omitempty"`
	Imm        uint32 `json:"imm,omitempty"`
	// DestQPN and QKey address a UD QP's SEND: the QP of the peer the
	// QP was connected to, and its Q_Key.
	DestQPN uint32 `json:"dest_qpn,omitempty"`
	QKey    uint32 `json:"qkey,omitempty"`
	// SwapAdd and Compare are an atomic's operands (cmp_swap: the value
	// swapped in and the one compared with; fetch_add: the addend). An
	// atomic's Len is 8: the original value lands there.
	SwapAdd uint64 `json:"swap_add,omitempty"`
	Compare uint64 `json:"compare,omitempty"`
}

// Recv is a receive work request: Len bytes at Offset of the QP's buffer.
type Recv struct {
	WRID   uint64 `json:"wr_id"`
	Offset uint64 `json:"offset"`
	Len    uint32 `json:"len"`
}

// Completion is a work completion; Status and Opcode use the verbs names
// (success, remote access error, transport retry exceeded, …; SEND, RECV,
// RDMA_WRITE, …), Error the endpoint's reason for a failed one.
type Completion struct {
	WRID    uint64 `json:"wr_id"`
	Status  string `json:"status"`
	Opcode  string `json:"opcode"`
	ByteLen uint32 `json:"byte_len"`
	Imm     uint32 `json:"imm,omitempty"`
	// SrcQP and GRH, on a UD receive: the sender's QP, and that the
	// buffer holds a 40-byte GRH before the payload.
	SrcQP uint32 `json:"src_qp,omitempty"`
	GRH   bool   `json:"grh,omitempty"`
	Error string `json:"error,omitempty"`
}

// CompletionOf is wc as the adapter reports it.
func CompletionOf(wc endpoint.WC) Completion {
	c := Completion{WRID: wc.WRID, Status: wc.Status.String(), Opcode: wc.Opcode.String(), ByteLen: wc.ByteLen, Imm: wc.Imm,
		SrcQP: wc.SrcQP, GRH: wc.GRH}
	if wc.Err != nil {
		c.Error = wc.Err.Error()
	}
	return c
}

// The request errors, for callers that map them (an HTTP adapter answers
// 400 for ErrUnknownOp and ErrOutside, 409 for ErrNoBuffer and a refused
// post).
var (
	ErrUnknownOp = errors.New("unknown op")
	ErrOutside   = errors.New("outside the buffer")
	ErrNoBuffer  = errors.New("no buffer")
)

// ops maps the adapter's operation names to verbs.
var ops = map[string]endpoint.WROpcode{"send": endpoint.WRSend, "send_imm": endpoint.WRSendImm,
	"write": endpoint.WRWrite, "write_imm": endpoint.WRWriteImm, "read": endpoint.WRRead,
	"cmp_swap": endpoint.WRAtomicCmpSwp, "fetch_add": endpoint.WRAtomicFetchAdd}

// Opcode is the verb of the operation name op.
func Opcode(op string) (endpoint.WROpcode, error) {
	if o, ok := ops[op]; ok {
		return o, nil
	}
	return 0, fmt.Errorf("%w %q: want send, send_imm, write, write_imm, read, cmp_swap or fetch_add", ErrUnknownOp, op)
}

// Access is what a QP's buffer is registered for: the tester may write,
// read and run atomics on it remotely, the QP writes into it locally
// (RECV, READ, an atomic's original value).
const Access = endpoint.AccessLocalWrite | endpoint.AccessRemoteWrite | endpoint.AccessRemoteRead | endpoint.AccessRemoteAtomic

// AccessFor is Access, without remote atomics when noAtomic is set (the
// compliance case that checks a responder refuses them).
func AccessFor(noAtomic bool) endpoint.Access {
	if noAtomic {
		return Access &^ endpoint.AccessRemoteAtomic
	}
	return Access
}

// QP is a QP and its buffer, registered as MR (nil without a buffer).
type QP struct {
	QP  *endpoint.QP
	MR  *endpoint.MR
	Buf []byte
	// Peer is the address the QP was connected to: a UD QP's SENDs go
	// there.
	Peer netip.Addr
}

// span checks [off, off+n) against the buffer, without overflow.
func (q QP) span(off, n uint64) error {
	if q.MR == nil {
		return fmt.Errorf("%w: the qp was created without buffer_bytes", ErrNoBuffer)
	}
	if off > uint64(len(q.Buf)) || n > uint64(len(q.Buf))-off {
		return fmt.Errorf("[%d, %d) is %w of %d bytes", off, off+n, ErrOutside, len(q.Buf))
	}
	return nil
}

// local is the scatter-gather entry of [off, off+n) of the buffer.
func (q QP) local(off uint64, n uint32) endpoint.SGE {
	return endpoint.SGE{Addr: q.MR.Addr + off, Length: n, LKey: q.MR.LKey}
}

// PostSend posts wr, signaled.
func (q QP) PostSend(wr WR) error {
	op, err := Opcode(wr.Op)
	if err != nil {
		return err
	}
	if err := q.span(wr.Offset, uint64(wr.Len)); err != nil {
		return err
	}
	sw := endpoint.SendWR{WRID: wr.WRID, Opcode: op, Signaled: true, RemoteAddr: wr.RemoteAddr, RKey: wr.RKey, Imm: wr.Imm,
		Local: q.local(wr.Offset, wr.Len), SwapAdd: wr.SwapAdd, Compare: wr.Compare}
	if q.QP.Type() == endpoint.TypeUD {
		sw.UD = &endpoint.UDDest{IP: q.Peer, QPN: wr.DestQPN, QKey: wr.QKey}
	}
	return q.QP.PostSend(sw)
}

// PostRecv posts r.
func (q QP) PostRecv(r Recv) error {
	if err := q.span(r.Offset, uint64(r.Len)); err != nil {
		return err
	}
	return q.QP.PostRecv(endpoint.RecvWR{WRID: r.WRID, Local: q.local(r.Offset, r.Len)})
}

// Read returns a copy of [off, off+n) of the buffer.
func (q QP) Read(off, n uint64) ([]byte, error) {
	if err := q.span(off, n); err != nil {
		return nil, err
	}
	return append([]byte{}, q.Buf[off:off+n]...), nil
}

// Write copies data to the buffer at off.
func (q QP) Write(off uint64, data []byte) error {
	if err := q.span(off, uint64(len(data))); err != nil {
		return err
	}
	copy(q.Buf[off:], data)
	return nil
}

// QPType is the transport service of the adapter's type name: "rc" (or
// "") or "ud".
func QPType(name string) (endpoint.QPType, error) {
	switch name {
	case "", "rc":
		return endpoint.TypeRC, nil
	case "ud":
		return endpoint.TypeUD, nil
	}
	return 0, fmt.Errorf("qp type %q: want rc or ud", name)
}
