package nodeapi

import "github.com/rocelab/rocelab/endpoint"

// NICInfo describes one NIC of an endpoint node.
type NICInfo struct {
	Index  int    `json:"index"`
	Name   string `json:"name"`
	IfName string `json:"ifname"`
	IP     string `json:"ip"`
	MAC    string `json:"mac"`
	MTU    int    `json:"mtu"`
	Rate   int64  `json:"rate_bps"`
}

// QPRequest is POST /qp: a reliable-connected QP on NIC (a NIC name,
// its port name such as "gpu0", its ifname or index; "" is the node's
// first NIC) with its own CQ, and
// optionally a registered, memory-backed buffer of Buffer bytes that the
// peer may read and write.
// MaxRegionBytes bounds one registered region an endpoint node makes for
// a QP or a collective's receive side (the CLI checks sizes against it
// before it asks a node).
const MaxRegionBytes = 1 << 30

type QPRequest struct {
	NIC    string        `json:"nic"`
	Mode   endpoint.Mode `json:"mode,omitempty"` // rocev2 (default) or metaroce
	CC     string        `json:"cc,omitempty"`   // none (default), dcqcn or credit
	Paths  int           `json:"paths,omitempty"`
	Buffer int64         `json:"buffer_bytes,omitempty"`
	// Owner, if set, names who the QP belongs to (a perf run): POST
	// /qps/delete with that owner deletes all its QPs, also those whose
	// creation the owner never heard back from, and refuses the owner's
	// later creates.
	Owner string `json:"owner,omitempty"`
	// PSN, if set, is the first PSN the QP sends (default: random).
	PSN *uint32 `json:"psn,omitempty"`
	// Type is rc (default) or ud, QKey a UD QP's Q_Key (the compliance
	// adapter's UD cases).
	Type string `json:"type,omitempty"`
	QKey uint32 `json:"qkey,omitempty"`
	// NoRemoteAtomic registers the buffer without remote-atomic access
	// (the compliance adapter's atomic cases).
	NoRemoteAtomic bool `json:"no_remote_atomic,omitempty"`
	// LeaseMS, with Owner, is the owner's lease in wall-clock ms: unless
	// the owner renews it (POST /owners/renew) or deletes its QPs first,
	// the node stops the owner's jobs and deletes its QPs when it runs
	// out — an initiator killed with -9 leaves nothing behind for long.
	LeaseMS int64 `json:"lease_ms,omitempty"`
}

// RenewRequest is POST /owners/renew: the owner's lease runs LeaseMS from
// now. An owner that has finished (its QPs deleted by owner, or its lease
// run out) gets 409.
type RenewRequest struct {
	Owner   string `json:"owner"`
	LeaseMS int64  `json:"lease_ms"`
}

// MaxQPsPerNIC is how many QPs an endpoint node keeps on one NIC: POST /qp
// beyond it is refused (409), and the CLI refuses a --qps above it before
// it creates any. Each QP costs the node memory, a buffer and telemetry
// rows; the limit keeps one request from wrecking a lab.
const MaxQPsPerNIC = 4096

// DeleteQPsRequest is POST /qps/delete: the QPs to destroy. IDs that do
// not exist are skipped; a QP a running job holds is not deleted (409).
type DeleteQPsRequest struct {
	IDs []int `json:"ids,omitempty"`
	// Owner, if set, adds every QP of that owner and closes the owner.
	Owner string `json:"owner,omitempty"`
}

// QPsDeleted is what POST /qps/delete destroyed.
type QPsDeleted struct {
	Deleted int `json:"deleted"`
}

// BufferInfo is a registered buffer as a peer addresses it.
type BufferInfo struct {
	Addr uint64 `json:"addr"`
	RKey uint32 `json:"rkey"`
	Len  int64  `json:"len"`
}

// QPInfo describes a QP: Conn is what the peer needs to connect to it.
type QPInfo struct {
	ID     int               `json:"id"`
	NIC    string            `json:"nic"`
	QPN    uint32            `json:"qpn"`
	State  string            `json:"state"`
	Mode   endpoint.Mode     `json:"mode"` // in force (MetaRoCE once negotiated)
	Conn   endpoint.ConnInfo `json:"conn"`
	Buffer BufferInfo        `json:"buffer"`
	Error  string            `json:"error,omitempty"`
}

// ConnectRequest is POST /qp/{id}/connect: the peer QP's ConnInfo and
// buffer.
type ConnectRequest struct {
	Remote       endpoint.ConnInfo `json:"remote"`
	RemoteBuffer BufferInfo        `json:"remote_buffer"`
}
