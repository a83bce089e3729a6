package collective

// Write is one RDMA WRITE with immediate, as the engine posts it: Len bytes
// from the writer's local buffer Src into the receive region of rank To at
// byte offset Off, carrying the 32-bit immediate Imm.
//
// In payload-free mode Src is nil and only Len matters. Otherwise
// len(Src) >= Len and Src stays untouched until the data has arrived at the
// peer (the engine may reuse it before done runs: by then an RDMA NIC has
// read it, and anything it retransmits later is a duplicate the receiver
// drops).
type Write struct {
	From, To int    // writer and target rank
	Src      []byte // local source, nil in payload-free mode
	Len      int    // bytes to write; 0 is a legal pure-signal write
	Off      int    // byte offset in the target's receive region
	Imm      uint32 // immediate delivered with the arrival
}

// ArrivalFunc is called on the target rank when a write has completely
// landed in its receive region: Len bytes from rank from at byte offset off,
// with immediate imm. An RDMA adapter calls it on the receive completion
// (IBV_WC_RECV_RDMA_WITH_IMM) of the message; off is the offset the writer
// targeted (the engine keys on from and imm and checks off and n against
// what it expects).
type ArrivalFunc func(from, off, n int, imm uint32)

// Transport is what the collective engine needs from a network: one-sided
// writes with immediate into a peer's registered receive region, and
// completions, all delivered as callbacks on the model's one goroutine.
// It is shaped after an RDMA-based NCCL net plugin: Listen is registering
// a memory region (and pre-posting receives for the immediates), Write is
// ibv_post_send of IBV_WR_RDMA_WRITE_WITH_IMM on the queue pair from→to.
//
// Implementations never call back from inside Listen or Write; callbacks
// run later, from the scheduler.
type Transport interface {
	// Listen registers rank's receive region of size bytes — region is nil
	// in payload-free mode, else len(region) == size — and the function
	// called for each write that lands in it. A new Listen for the same
	// rank replaces the previous region and function.
	Listen(rank int, region []byte, size int, arrived ArrivalFunc)
	// Write posts w. It returns an error at once for a write that can never
	// be carried (unknown rank, out-of-range offset); otherwise done runs on
	// the writer once the local completion is reported, with a non-nil
	// error if the write failed (for example retries exhausted).
	Write(w Write, done func(error)) error
}
