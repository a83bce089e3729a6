package cm

import "fmt"

// Path is one path of a REQ (the primary; the alternate is left zero):
// on RoCE the GIDs are the ports' IPv4-mapped or IPv6 addresses and the
// LIDs are 0xFFFF (permissive).
type Path struct {
	LocalLID, RemoteLID uint16
	LocalGID, RemoteGID [16]byte
	FlowLabel           uint32
	PacketRate          uint8
	TrafficClass        uint8
	HopLimit            uint8
	SL                  uint8
	SubnetLocal         bool
	LocalAckTimeout     uint8
}

// REQ asks a peer for a connection (IBTA table 106).
type REQ struct {
	LocalCommID             uint32
	ServiceID               uint64
	LocalCAGUID             uint64
	LocalQKey               uint32
	LocalQPN                uint32
	ResponderResources      uint8
	InitiatorDepth          uint8
	RemoteCMResponseTimeout uint8
	// TransportServiceType: 0 RC, 1 UC, 3 XRC.
	TransportServiceType   uint8
	EndToEndFlowControl    bool
	StartingPSN            uint32
	LocalCMResponseTimeout uint8
	RetryCount             uint8
	PKey                   uint16
	// PathMTU is the IBTA MTU code (1 = 256 … 5 = 4096).
	PathMTU       uint8
	RNRRetryCount uint8
	MaxCMRetries  uint8
	SRQ           bool
	Primary       Path
	Private       []byte // at most 92 bytes
}

// REQ's fields, by IBTA table 106's offsets (after the MAD header).
var (
	reqLocalCommID   = u32(0)
	reqServiceID     = u64(8)
	reqCAGUID        = u64(16)
	reqQKey          = u32(28)
	reqQPN           = u24(32)
	reqRespRes       = u8(35)
	reqInitDepth     = u8(39)
	reqRemoteTimeout = bits(43, 0, 5)
	reqTransport     = bits(43, 5, 2)
	reqE2E           = bits(43, 7, 1)
	reqPSN           = u24(44)
	reqLocalTimeout  = bits(47, 0, 5)
	reqRetry         = bits(47, 5, 3)
	reqPKey          = u16(48)
	reqMTU           = bits(50, 0, 4)
	reqRNRRetry      = bits(50, 5, 3)
	reqMaxRetries    = bits(51, 0, 4)
	reqSRQ           = bits(51, 4, 1)
)

const (
	reqPrimary     = 52
	reqPrivate     = 140
	reqPrivateLen  = DataLen - reqPrivate // 92
	repPrivate     = 36
	repPrivateLen  = DataLen - repPrivate // 196
	rejARI         = 12
	rejPrivate     = 84
	rejPrivateLen  = DataLen - rejPrivate // 148
	rtuPrivateLen  = DataLen - 8          // 224 (DREP too)
	dreqPrivateLen = DataLen - 12         // 220
	mraPrivateLen  = DataLen - 10         // 222
)

func (*REQ) Attr() AttrID { return AttrREQ }

func (m *REQ) put(d []byte) {
	reqLocalCommID.set(d, uint64(m.LocalCommID))
	reqServiceID.set(d, m.ServiceID)
	reqCAGUID.set(d, m.LocalCAGUID)
	reqQKey.set(d, uint64(m.LocalQKey))
	reqQPN.set(d, uint64(m.LocalQPN))
	reqRespRes.set(d, uint64(m.ResponderResources))
	reqInitDepth.set(d, uint64(m.InitiatorDepth))
	reqRemoteTimeout.set(d, uint64(m.RemoteCMResponseTimeout))
	reqTransport.set(d, uint64(m.TransportServiceType))
	reqE2E.set(d, b2u(m.EndToEndFlowControl))
	reqPSN.set(d, uint64(m.StartingPSN))
	reqLocalTimeout.set(d, uint64(m.LocalCMResponseTimeout))
	reqRetry.set(d, uint64(m.RetryCount))
	reqPKey.set(d, uint64(m.PKey))
	reqMTU.set(d, uint64(m.PathMTU))
	reqRNRRetry.set(d, uint64(m.RNRRetryCount))
	reqMaxRetries.set(d, uint64(m.MaxCMRetries))
	reqSRQ.set(d, b2u(m.SRQ))
	m.Primary.put(d[reqPrimary:])
	copy(d[reqPrivate:], m.Private)
}

// put writes p at the start of d (IBTA table 106, bytes 52–95).
func (p *Path) put(d []byte) {
	u16(0).set(d, uint64(p.LocalLID))
	u16(2).set(d, uint64(p.RemoteLID))
	copy(d[4:20], p.LocalGID[:])
	copy(d[20:36], p.RemoteGID[:])
	field{36, 4, 0, 20}.set(d, uint64(p.FlowLabel))
	bits(39, 2, 6).set(d, uint64(p.PacketRate))
	u8(40).set(d, uint64(p.TrafficClass))
	u8(41).set(d, uint64(p.HopLimit))
	bits(42, 0, 4).set(d, uint64(p.SL))
	bits(42, 4, 1).set(d, b2u(p.SubnetLocal))
	bits(43, 0, 5).set(d, uint64(p.LocalAckTimeout))
}

func (p *Path) get(d []byte) {
	p.LocalLID, p.RemoteLID = uint16(u16(0).get(d)), uint16(u16(2).get(d))
	copy(p.LocalGID[:], d[4:20])
	copy(p.RemoteGID[:], d[20:36])
	p.FlowLabel = uint32(field{36, 4, 0, 20}.get(d))
	p.PacketRate = uint8(bits(39, 2, 6).get(d))
	p.TrafficClass, p.HopLimit = d[40], d[41]
	p.SL, p.SubnetLocal = uint8(bits(42, 0, 4).get(d)), bits(42, 4, 1).get(d) == 1
	p.LocalAckTimeout = uint8(bits(43, 0, 5).get(d))
}

// DecodeREQ reads a REQ from d, a MAD's data.
func DecodeREQ(d []byte, m *REQ) error {
	if err := dataLen(d); err != nil {
		return err
	}
	*m = REQ{LocalCommID: uint32(reqLocalCommID.get(d)), ServiceID: reqServiceID.get(d), LocalCAGUID: reqCAGUID.get(d),
		LocalQKey: uint32(reqQKey.get(d)), LocalQPN: uint32(reqQPN.get(d)), ResponderResources: uint8(reqRespRes.get(d)),
		InitiatorDepth: uint8(reqInitDepth.get(d)), RemoteCMResponseTimeout: uint8(reqRemoteTimeout.get(d)),
		TransportServiceType: uint8(reqTransport.get(d)), EndToEndFlowControl: reqE2E.get(d) == 1,
		StartingPSN: uint32(reqPSN.get(d)), LocalCMResponseTimeout: uint8(reqLocalTimeout.get(d)),
		RetryCount: uint8(reqRetry.get(d)), PKey: uint16(reqPKey.get(d)), PathMTU: uint8(reqMTU.get(d)),
		RNRRetryCount: uint8(reqRNRRetry.get(d)), MaxCMRetries: uint8(reqMaxRetries.get(d)), SRQ: reqSRQ.get(d) == 1,
		Private: append([]byte(nil), d[reqPrivate:]...)}
	m.Primary.get(d[reqPrimary:])
	return nil
}

// REP accepts a REQ (IBTA table 110).
type REP struct {
	LocalCommID, RemoteCommID uint32
	LocalQKey                 uint32
	LocalQPN                  uint32
	StartingPSN               uint32
	ResponderResources        uint8
	InitiatorDepth            uint8
	TargetAckDelay            uint8
	FailoverAccepted          uint8
	EndToEndFlowControl       bool
	RNRRetryCount             uint8
	SRQ                       bool
	LocalCAGUID               uint64
	Private                   []byte // at most 196 bytes
}

var (
	repQPN        = u24(12)
	repPSN        = u24(20)
	repAckDelay   = bits(26, 0, 5)
	repFailover   = bits(26, 5, 2)
	repE2E        = bits(26, 7, 1)
	repRNRRetry   = bits(27, 0, 3)
	repSRQ        = bits(27, 3, 1)
	repLocalCAGID = u64(28)
)

func (*REP) Attr() AttrID { return AttrREP }

func (m *REP) put(d []byte) {
	putIDs(d, m.LocalCommID, m.RemoteCommID)
	u32(8).set(d, uint64(m.LocalQKey))
	repQPN.set(d, uint64(m.LocalQPN))
	repPSN.set(d, uint64(m.StartingPSN))
	u8(24).set(d, uint64(m.ResponderResources))
	u8(25).set(d, uint64(m.InitiatorDepth))
	repAckDelay.set(d, uint64(m.TargetAckDelay))
	repFailover.set(d, uint64(m.FailoverAccepted))
	repE2E.set(d, b2u(m.EndToEndFlowControl))
	repRNRRetry.set(d, uint64(m.RNRRetryCount))
	repSRQ.set(d, b2u(m.SRQ))
	repLocalCAGID.set(d, m.LocalCAGUID)
	copy(d[repPrivate:], m.Private)
}

// DecodeREP reads a REP from d, a MAD's data.
func DecodeREP(d []byte, m *REP) error {
	if err := dataLen(d); err != nil {
		return err
	}
	l, r := getIDs(d)
	*m = REP{LocalCommID: l, RemoteCommID: r, LocalQKey: uint32(u32(8).get(d)), LocalQPN: uint32(repQPN.get(d)),
		StartingPSN: uint32(repPSN.get(d)), ResponderResources: d[24], InitiatorDepth: d[25],
		TargetAckDelay: uint8(repAckDelay.get(d)), FailoverAccepted: uint8(repFailover.get(d)), EndToEndFlowControl: repE2E.get(d) == 1,
		RNRRetryCount: uint8(repRNRRetry.get(d)), SRQ: repSRQ.get(d) == 1, LocalCAGUID: repLocalCAGID.get(d),
		Private: append([]byte(nil), d[repPrivate:]...)}
	return nil
}

// RTU, DREP: the two IDs and private data (IBTA tables 111 and 113).
type (
	RTU struct {
		LocalCommID, RemoteCommID uint32
		Private                   []byte
	}
	DREP struct {
		LocalCommID, RemoteCommID uint32
		Private                   []byte
	}
)

func (*RTU) Attr() AttrID  { return AttrRTU }
func (*DREP) Attr() AttrID { return AttrDREP }
func (m *RTU) put(d []byte) {
	putIDs(d, m.LocalCommID, m.RemoteCommID)
	copy(d[8:], m.Private)
}
func (m *DREP) put(d []byte) {
	putIDs(d, m.LocalCommID, m.RemoteCommID)
	copy(d[8:], m.Private)
}

// DecodeRTU reads an RTU from d, a MAD's data.
func DecodeRTU(d []byte, m *RTU) error {
	if err := dataLen(d); err != nil {
		return err
	}
	m.LocalCommID, m.RemoteCommID = getIDs(d)
	m.Private = append([]byte(nil), d[8:]...)
	return nil
}

// DecodeDREP reads a DREP from d, a MAD's data.
func DecodeDREP(d []byte, m *DREP) error {
	var r RTU
	err := DecodeRTU(d, &r)
	*m = DREP(r)
	return err
}

// REJ refuses a REQ or a REP (IBTA table 108).
type REJ struct {
	LocalCommID, RemoteCommID uint32
	// MessageRejected: 0 REQ, 1 REP, 2 no message.
	MessageRejected uint8
	Reason          uint16
	ARI             []byte // additional rejection information, at most 72 bytes
	Private         []byte // at most 148 bytes
}

// REJ reasons (IBTA table 109) that rdma_cm and this lab use.
const (
	RejectNoQP               = 1
	RejectTimeout            = 3
	RejectInvalidServiceID   = 8
	RejectConsumer           = 28
	RejectUnsupportedRequest = 31
)

func (*REJ) Attr() AttrID { return AttrREJ }

func (m *REJ) put(d []byte) {
	putIDs(d, m.LocalCommID, m.RemoteCommID)
	bits(8, 0, 2).set(d, uint64(m.MessageRejected))
	bits(9, 0, 7).set(d, uint64(min(len(m.ARI), 72)))
	u16(10).set(d, uint64(m.Reason))
	copy(d[rejARI:rejPrivate], m.ARI)
	copy(d[rejPrivate:], m.Private)
}

// DecodeREJ reads a REJ from d, a MAD's data.
func DecodeREJ(d []byte, m *REJ) error {
	if err := dataLen(d); err != nil {
		return err
	}
	l, r := getIDs(d)
	n := int(bits(9, 0, 7).get(d))
	if n > rejPrivate-rejARI {
		return fmt.Errorf("%w: REJ with %d bytes of rejection information, at most %d", ErrMAD, n, rejPrivate-rejARI)
	}
	*m = REJ{LocalCommID: l, RemoteCommID: r, MessageRejected: uint8(bits(8, 0, 2).get(d)), Reason: uint16(u16(10).get(d)),
		ARI: append([]byte(nil), d[rejARI:rejARI+n]...), Private: append([]byte(nil), d[rejPrivate:]...)}
	return nil
}

// DREQ asks to disconnect (IBTA table 112).
type DREQ struct {
	LocalCommID, RemoteCommID uint32
	RemoteQPN                 uint32
	Private                   []byte // at most 220 bytes
}

func (*DREQ) Attr() AttrID { return AttrDREQ }

func (m *DREQ) put(d []byte) {
	putIDs(d, m.LocalCommID, m.RemoteCommID)
	u24(8).set(d, uint64(m.RemoteQPN))
	copy(d[12:], m.Private)
}

// DecodeDREQ reads a DREQ from d, a MAD's data.
func DecodeDREQ(d []byte, m *DREQ) error {
	if err := dataLen(d); err != nil {
		return err
	}
	l, r := getIDs(d)
	*m = DREQ{LocalCommID: l, RemoteCommID: r, RemoteQPN: uint32(u24(8).get(d)), Private: append([]byte(nil), d[12:]...)}
	return nil
}

// MRA asks the sender of a message for more time (IBTA table 107).
type MRA struct {
	LocalCommID, RemoteCommID uint32
	// MessageMRAed: 0 REQ, 1 REP, 2 LAP.
	MessageMRAed   uint8
	ServiceTimeout uint8
	Private        []byte // at most 222 bytes
}

func (*MRA) Attr() AttrID { return AttrMRA }

func (m *MRA) put(d []byte) {
	putIDs(d, m.LocalCommID, m.RemoteCommID)
	bits(8, 0, 2).set(d, uint64(m.MessageMRAed))
	bits(9, 0, 5).set(d, uint64(m.ServiceTimeout))
	copy(d[10:], m.Private)
}

// DecodeMRA reads an MRA from d, a MAD's data.
func DecodeMRA(d []byte, m *MRA) error {
	if err := dataLen(d); err != nil {
		return err
	}
	l, r := getIDs(d)
	*m = MRA{LocalCommID: l, RemoteCommID: r, MessageMRAed: uint8(bits(8, 0, 2).get(d)),
		ServiceTimeout: uint8(bits(9, 0, 5).get(d)), Private: append([]byte(nil), d[10:]...)}
	return nil
}

func putIDs(d []byte, local, remote uint32) {
	u32(0).set(d, uint64(local))
	u32(4).set(d, uint64(remote))
}

func getIDs(d []byte) (local, remote uint32) { return uint32(u32(0).get(d)), uint32(u32(4).get(d)) }

func dataLen(d []byte) error {
	if len(d) < DataLen {
		return fmt.Errorf("%w: %d bytes of message data, want %d", ErrMAD, len(d), DataLen)
	}
	return nil
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
