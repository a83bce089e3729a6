package nodeapi

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
type WorkRequest struct {
	WRID       uint64 `json:"wr_id"`
	Op         string `json:"op"`
	Offset     uint64 `json:"offset"`
	Len        uint32 `json:"len"`
	RemoteAddr uint64 `json:"remote_addr,omitempty"`
	RKey       uint32 `json:"rkey,omitempty"`
	Imm        uint32 `json:"imm,omitempty"`
}

// RecvRequest is POST /qp/{id}/recv: a receive buffer of Len bytes at
// Offset of the QP's buffer.
type RecvRequest struct {
	WRID   uint64 `json:"wr_id"`
	Offset uint64 `json:"offset"`
	Len    uint32 `json:"len"`
}

// Completion is a work completion; Status and Opcode use the verbs names
// (success, remote access error, transport retry exceeded, …; SEND, RECV,
// RDMA_WRITE, …).
type Completion struct {
	WRID    uint64 `json:"wr_id"`
	Status  string `json:"status"`
	Opcode  string `json:"opcode"`
	ByteLen uint32 `json:"byte_len"`
	Imm     uint32 `json:"imm,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Mem is bytes of a QP's buffer (base64 in JSON).
type Mem struct {
	Data []byte `json:"data"`
}

// Empty is the answer of an operation that returns nothing.
type Empty struct{}
