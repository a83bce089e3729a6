package endpoint

import "fmt"

// Status is a work completion status.
type Status uint8

// Completion statuses (the ibv_wc_status values the model produces).
const (
	StatusSuccess              Status = iota
	StatusLocalLength                 // local length error (a message longer than the receive buffer, at the responder)
	StatusLocalProtection             // local protection error (bad lkey, bounds, permission)
	StatusFlush                       // flushed: the QP went to ERROR before the WR completed
	StatusRemoteInvalidRequest        // the responder answered NAK invalid request (0x61)
	StatusRemoteAccess                // the responder answered NAK remote access error (0x62)
	StatusRemoteOperational           // the responder answered NAK remote operational error (0x63)
	StatusRetryExceeded               // transport retry counter exceeded (timeouts)
	StatusRNRRetryExceeded            // RNR retry counter exceeded
)

var statusNames = [...]string{"success", "local length error", "local protection error", "flush error",
	"remote invalid request", "remote access error", "remote operational error",
	"transport retry exceeded", "RNR retry exceeded"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("status %d", uint8(s))
}

// WCOpcode says what a completion completes.
type WCOpcode uint8

// Completion opcodes.
const (
	WCSend WCOpcode = iota
	WCWrite
	WCRead
	WCRecv         // a SEND arrived
	WCRecvWriteImm // an RDMA WRITE with immediate arrived
	WCCompSwap
	WCFetchAdd
)

func (o WCOpcode) String() string {
	return [...]string{"SEND", "RDMA_WRITE", "RDMA_READ", "RECV", "RECV_RDMA_WITH_IMM", "COMP_SWAP", "FETCH_ADD"}[o]
}

// WC is a work completion.
type WC struct {
	WRID    uint64
	Status  Status
	Opcode  WCOpcode
	ByteLen uint32 // bytes received (receive completions) or moved
	Imm     uint32
	HasImm  bool
	QPN     uint32
	// SrcQP and GRH, on a UD receive: the sender's QP, and the GRH that
	// the first GRHLen bytes of the buffer hold.
	SrcQP uint32
	GRH   bool
	IPv6  bool // the datagram came over IPv6 (its GRH is the IPv6 header)
	// Err describes a failed completion (nil on success).
	Err error
}

// CQ is a completion queue. Completions are queued for Poll, or handed to
// the OnCompletion callback when one is set (then they are not queued).
type CQ struct {
	q     []WC
	head  int
	depth int
	cb    func(WC)
	// Overflows counts completions lost because the queue was full.
	Overflows int64
}

// CreateCQ returns a completion queue holding up to depth completions
// (0: unbounded).
func (n *NIC) CreateCQ(depth int) *CQ { return &CQ{depth: depth} }

// OnCompletion makes the CQ event-driven: f is called for every completion
// as it happens (inside the model's event), instead of queueing it.
func (c *CQ) OnCompletion(f func(WC)) { c.cb = f }

// Poll returns up to max queued completions, oldest first (max <= 0: all).
func (c *CQ) Poll(max int) []WC {
	n := len(c.q) - c.head
	if max > 0 && max < n {
		n = max
	}
	out := append([]WC(nil), c.q[c.head:c.head+n]...)
	c.head += n
	if c.head == len(c.q) {
		c.q, c.head = c.q[:0], 0
	}
	return out
}

// Len returns the number of queued completions.
func (c *CQ) Len() int { return len(c.q) - c.head }

func (c *CQ) push(wc WC) {
	if c.cb != nil {
		c.cb(wc)
		return
	}
	if c.depth > 0 && c.Len() >= c.depth {
		c.Overflows++
		return
	}
	c.q = append(c.q, wc)
}
