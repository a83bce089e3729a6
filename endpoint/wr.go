package endpoint

// Work requests: what a send or receive queue takes (PostSend, PostRecv)
// and the operations a send WR names.

// WROpcode is the operation of a send WR.
type WROpcode uint8

// Send WR operations.
const (
	WRSend WROpcode = iota
	WRSendImm
	WRWrite
	WRWriteImm
	WRRead
	// The RC atomics (RoCEv2 mode): 8 bytes at RemoteAddr, 8-aligned,
	// compared and swapped (Compare, SwapAdd) or added to (SwapAdd); the
	// original value lands in Local, which is 8 bytes.
	WRAtomicCmpSwp
	WRAtomicFetchAdd
)

func (o WROpcode) String() string {
	return [...]string{"SEND", "SEND_WITH_IMM", "RDMA_WRITE", "RDMA_WRITE_WITH_IMM", "RDMA_READ",
		"ATOMIC_CMP_AND_SWP", "ATOMIC_FETCH_AND_ADD"}[o]
}

// readsBack reports whether the WR's data comes back in responses (a READ,
// an atomic) rather than going out.
func (o WROpcode) readsBack() bool { return o == WRRead || o >= WRAtomicCmpSwp }

// atomic reports whether the WR is an RC atomic.
func (o WROpcode) atomic() bool { return o >= WRAtomicCmpSwp }

// wc is the completion opcode of a send WR.
func (o WROpcode) wc() WCOpcode {
	return [...]WCOpcode{WCSend, WCSend, WCWrite, WCWrite, WCRead, WCCompSwap, WCFetchAdd}[o]
}

// SGE is one scatter/gather element: Length bytes at Addr in the region
// of LKey.
type SGE struct {
	Addr   uint64
	Length uint32
	LKey   uint32
}

// SendWR is a send work request (one SGE).
type SendWR struct {
	WRID   uint64
	Opcode WROpcode
	// Local is the WR's (first) local buffer; More the rest of its
	// scatter/gather list, if it has one (at most MaxSGE-1).
	Local      SGE
	More       []SGE
	RemoteAddr uint64 // WRITE, READ
	RKey       uint32 // WRITE, READ
	Imm        uint32 // SEND and WRITE with immediate
	// SwapAdd and Compare are an atomic's operands: the value swapped in
	// (CmpSwap) or added (FetchAdd), and the value compared with.
	SwapAdd, Compare uint64
	Signaled         bool
	// UD is a UD QP's destination (nil on RC).
	UD *UDDest
}

// RecvWR is a receive work request: Local, then More, take a message's
// bytes in order.
type RecvWR struct {
	WRID  uint64
	Local SGE
	More  []SGE
}
