package nodeapi

import "github.com/rocelab/rocelab/endpoint/adapter"

// The compliance adapter's messages (docs/compliance.md): with POST /qp,
// GET /qp/{id}, POST /qp/{id}/connect and DELETE /qp/{id} they let a
// tester drive one QP of an endpoint node verb by verb.
//
//	POST /qp/{id}/send         WorkRequest → {} (every WR signaled)
//	POST /qp/{id}/recv         RecvRequest → {}
//	GET  /qp/{id}/completions  []Completion, drained
//	GET  /qp/{id}/mem?offset=O&len=N   Mem (N bytes of the QP's buffer at O)
//	PUT  /qp/{id}/mem?offset=O         Mem → {} (written at O)

// WorkRequest is POST /qp/{id}/send: Len bytes at Offset of the QP's own
// buffer, sent as Op (send, send_imm, write, write_imm or read: a READ
// places the remote bytes there).
type WorkRequest = adapter.WR

// RecvRequest is POST /qp/{id}/recv: a receive buffer of Len bytes at
// Offset of the QP's buffer.
type RecvRequest = adapter.Recv

// Completion is a work completion; Status and Opcode use the verbs names
// (success, remote access error, transport retry exceeded, …; SEND, RECV,
// RDMA_WRITE, …).
type Completion = adapter.Completion

// Mem is bytes of a QP's buffer (base64 in JSON).
type Mem struct {
	Data []byte `json:"data"`
}

// Empty is the answer of an operation that returns nothing.
type Empty struct{}
