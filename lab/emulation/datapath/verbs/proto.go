package verbs

import (
	"encoding/binary"

	"github.com/rocelab/rocelab/endpoint"
)

// The message layout of libibverbs/proto.h (native byte order: both ends
// run on one machine, which is little-endian wherever rocelab runs).
// TestProtoMatchesHeader compiles the header and compares.
const (
	protoVersion = 2
	maxMsg       = 64 * 1024
	maxInline    = 512
	maxPieces    = 64

	opHello       = 1
	opOpen        = 2
	opAllocPD     = 3
	opDeallocPD   = 4
	opRegMR       = 5
	opDeregMR     = 6
	opCreateCQ    = 7
	opDestroyCQ   = 8
	opCreateQP    = 9
	opModifyQP    = 10
	opDestroyQP   = 11
	opPostSend    = 12
	opPostRecv    = 13
	opQueryQP     = 14
	opCreateSRQ   = 15
	opModifySRQ   = 16
	opQuerySRQ    = 17
	opDestroySRQ  = 18
	opPostSRQRecv = 19
	createSRQSize = 16
	modifySRQSize = 16
	srqMaxWR      = 1
	srqLimit      = 2

	hdrSize       = 16
	replySize     = 128 // err, len, msg[120]
	deviceSize    = 160
	pieceSize     = 24
	regMRSize     = 32
	createQPSize  = 40
	modifyQPSize  = 64
	sendWRSize    = 48
	recvWRSize    = 32
	sgeSize       = 16
	maxSGE        = 16
	wrSGL         = 8
	wrUD          = 16
	udDestSize    = 24
	wrAtomic      = 32
	atomicSize    = 16
	qptRC         = 2 // IBV_QPT_RC
	qptUD         = 4 // IBV_QPT_UD
	qpAttrQKey    = 1 << 6
	postSize      = 8
	cqeSize       = 32
	ringHead      = 0
	ringTail      = 64
	ringEntries   = 128
	openSize      = 32 // cc[16], mode[16]
	wrSignaled    = 1
	wrInline      = 2
	wrImm         = 4
	maxQPWR       = 32768
	maxCQEntries  = 1 << 23
	qpAttrState   = 1 << 0 // IBV_QP_STATE
	qpAttrAV      = 1 << 7
	qpAttrPathMTU = 1 << 8
	qpAttrRetry   = 1 << 10
	qpAttrRNR     = 1 << 11
	qpAttrRQPSN   = 1 << 12
	qpAttrSQPSN   = 1 << 16
	qpAttrDestQPN = 1 << 20
)

// ibv_qp_state values.
const (
	qpsReset = 0
	qpsInit  = 1
	qpsRTR   = 2
	qpsRTS   = 3
	qpsErr   = 6
)

var le = binary.LittleEndian

// device is struct rl_device.
type device struct {
	Name, NIC string
	MAC       [6]byte
	IPv4      [4]byte
	MTU       uint32
	RateBps   uint64
	Scale     uint32
	MaxQP     uint32
}

func (d device) append(b []byte) []byte {
	var x [deviceSize]byte
	copy(x[0:63], d.Name)
	copy(x[64:127], d.NIC)
	copy(x[128:134], d.MAC[:])
	copy(x[136:140], d.IPv4[:])
	le.PutUint32(x[140:], d.MTU)
	le.PutUint64(x[144:], d.RateBps)
	le.PutUint32(x[152:], d.Scale)
	le.PutUint32(x[156:], d.MaxQP)
	return append(b, x[:]...)
}

// sendWR is struct rl_send_wr.
type sendWR struct {
	WRID, Addr, RemoteAddr uint64
	Length, LKey, RKey     uint32
	Imm                    uint32 // as the program stored it (network order in memory)
	Opcode, Flags          uint8
	InlineLen              uint16
}

func readSendWR(b []byte) sendWR {
	return sendWR{WRID: le.Uint64(b), Addr: le.Uint64(b[8:]), RemoteAddr: le.Uint64(b[16:]),
		Length: le.Uint32(b[24:]), LKey: le.Uint32(b[28:]), RKey: le.Uint32(b[32:]), Imm: le.Uint32(b[36:]),
		Opcode: b[40], Flags: b[41], InlineLen: le.Uint16(b[42:])}
}

// recvWR is struct rl_recv_wr.
type recvWR struct {
	WRID, Addr         uint64
	Length, LKey, NSGE uint32
}

func readRecvWR(b []byte) recvWR {
	return recvWR{WRID: le.Uint64(b), Addr: le.Uint64(b[8:]), Length: le.Uint32(b[16:]), LKey: le.Uint32(b[20:]), NSGE: le.Uint32(b[24:])}
}

// readSGEs reads n struct rl_sge from the front of b; ok is false when b
// is too short or n too large.
func readSGEs(b []byte, n int) (sges []endpoint.SGE, rest []byte, ok bool) {
	if n < 0 || n >= maxSGE || len(b) < n*sgeSize {
		return nil, b, false
	}
	sges = make([]endpoint.SGE, n)
	for i := range sges {
		x := b[i*sgeSize:]
		sges[i] = endpoint.SGE{Addr: le.Uint64(x), Length: le.Uint32(x[8:]), LKey: le.Uint32(x[12:])}
	}
	return sges, b[n*sgeSize:], true
}

// readWRs reads the body of a POST_SEND or POST_RECV: a count, that many
// WRs of size bytes each, then the rest (POST_SEND's inline data). ok is
// false when the body is shorter than its count says.
func readWRs[W any](body []byte, size int, read func([]byte) W) (wrs []W, rest []byte, ok bool) {
	if len(body) < postSize {
		return nil, nil, false
	}
	n := int(le.Uint32(body))
	if n < 0 || len(body) < postSize+n*size {
		return nil, nil, false
	}
	wrs = make([]W, n)
	for i := range wrs {
		wrs[i] = read(body[postSize+i*size:])
	}
	return wrs, body[postSize+n*size:], true
}

// modifyQP is struct rl_modify_qp.
type modifyQP struct {
	Mask, State, Access, MTU, DestQPN, RQPSN, SQPSN uint32
	Timeout, Retry, RNRRetry, MinRNR, QKey          uint32
	DGID                                            [16]byte
}

func readModifyQP(b []byte) modifyQP {
	m := modifyQP{}
	f := []*uint32{&m.Mask, &m.State, &m.Access, &m.MTU, &m.DestQPN, &m.RQPSN, &m.SQPSN, &m.Timeout, &m.Retry, &m.RNRRetry, &m.MinRNR, &m.QKey}
	for i, p := range f {
		*p = le.Uint32(b[4*i:])
	}
	copy(m.DGID[:], b[48:64])
	return m
}

// cqe is struct rl_cqe.
type cqe struct {
	WRID              uint64
	ByteLen, Imm, QPN uint32
	Status, Opcode    uint8
	Flags, SL         uint8
	VendorErr, SrcQP  uint32
}

func (c cqe) put(b []byte) {
	le.PutUint64(b, c.WRID)
	le.PutUint32(b[8:], c.ByteLen)
	le.PutUint32(b[12:], c.Imm)
	le.PutUint32(b[16:], c.QPN)
	b[20], b[21], b[22], b[23] = c.Status, c.Opcode, c.Flags, c.SL
	le.PutUint32(b[24:], c.VendorErr)
	le.PutUint32(b[28:], c.SrcQP)
}
