package cm

import "fmt"

// Service ID resolution (IBTA vol. 1, 12.11): how an unreliable-datagram
// consumer finds the QP behind a service ID; rdma_cm's UDP port space
// uses it. A SIDR_REQ asks, a SIDR_REP answers; neither opens a
// connection.
const (
	AttrSIDRREQ AttrID = 0x0017
	AttrSIDRREP AttrID = 0x0018
)

func init() {
	attrNames[AttrSIDRREQ], attrNames[AttrSIDRREP] = "SIDR_REQ", "SIDR_REP"
}

// SIDRREQ asks the port it goes to for the QP of a service (IBTA table 114).
type SIDRREQ struct {
	RequestID uint32
	PKey      uint16
	ServiceID uint64
	Private   []byte // at most 216 bytes
}

// SIDR_REP statuses (IBTA table 116).
const (
	SIDRValid        = 0 // the QP and Q_Key are valid
	SIDRNoService    = 1 // service ID not supported
	SIDRRejected     = 2 // the consumer said no
	SIDRNoQP         = 3
	SIDRRedirect     = 4
	SIDRBadVersion   = 5
	sidrREQPrivate   = 16
	sidrREPQPN       = 8
	sidrREPServiceID = 12
	sidrREPQKey      = 20
	sidrREPPrivate   = 96
)

// SIDRREP answers a SIDR_REQ (IBTA table 115).
type SIDRREP struct {
	RequestID uint32
	Status    uint8
	QPN       uint32
	ServiceID uint64
	QKey      uint32
	Private   []byte // at most 136 bytes
}

func (*SIDRREQ) Attr() AttrID { return AttrSIDRREQ }
func (*SIDRREP) Attr() AttrID { return AttrSIDRREP }

func (m *SIDRREQ) put(d []byte) {
	u32(0).set(d, uint64(m.RequestID))
	u16(4).set(d, uint64(m.PKey))
	u64(8).set(d, m.ServiceID)
	copy(d[sidrREQPrivate:], m.Private)
}

func (m *SIDRREP) put(d []byte) {
	u32(0).set(d, uint64(m.RequestID))
	d[4] = m.Status
	u24(sidrREPQPN).set(d, uint64(m.QPN))
	u64(sidrREPServiceID).set(d, m.ServiceID)
	u32(sidrREPQKey).set(d, uint64(m.QKey))
	copy(d[sidrREPPrivate:], m.Private)
}

// DecodeSIDRREQ reads a SIDR_REQ from d, a MAD's data.
func DecodeSIDRREQ(d []byte, m *SIDRREQ) error {
	if err := dataLen(d); err != nil {
		return err
	}
	*m = SIDRREQ{RequestID: uint32(u32(0).get(d)), PKey: uint16(u16(4).get(d)), ServiceID: u64(8).get(d),
		Private: append([]byte(nil), d[sidrREQPrivate:]...)}
	return nil
}

// DecodeSIDRREP reads a SIDR_REP from d, a MAD's data.
func DecodeSIDRREP(d []byte, m *SIDRREP) error {
	if err := dataLen(d); err != nil {
		return err
	}
	if n := d[5]; n > 72 {
		return fmt.Errorf("%w: SIDR_REP with %d bytes of additional information, at most 72", ErrMAD, n)
	}
	*m = SIDRREP{RequestID: uint32(u32(0).get(d)), Status: d[4], QPN: uint32(u24(sidrREPQPN).get(d)),
		ServiceID: u64(sidrREPServiceID).get(d), QKey: uint32(u32(sidrREPQKey).get(d)),
		Private: append([]byte(nil), d[sidrREPPrivate:]...)}
	return nil
}
