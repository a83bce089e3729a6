package topologies

import (
	"encoding/json"
	"net"
	"net/netip"

	"github.com/rocelab/rocelab/core/clock"
)

// Topology is a resolved, validated topology: what Load and Parse return
// and what the lab and the simulator consume.
type Topology struct {
	// Name of the topology (the file's name key, or its base name).
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Source is the file it was read from.
	Source string `json:"source"`
	// Nodes in file order (generated nodes first); Node.Index is position+1.
	Nodes []*Node `json:"nodes"`
	// Links in file order (generated links first); Link.Index is position+1.
	Links []*Link `json:"links"`
	// Profiles used by at least one switch, by name.
	Profiles map[string]*Profile `json:"profiles"`
	// Plan is the addressing plan in force (see Address).
	Plan Plan `json:"plan"`

	byName map[string]*Node
	text   []byte
}

// Text returns the file text t was parsed from (nil for a topology built
// in Go): a deployed lab keeps it, to resolve targets against later.
func (t *Topology) Text() []byte { return t.text }

// Node returns the node called name, or nil.
func (t *Topology) Node(name string) *Node { return t.byName[name] }

// Kind is what a node is.
type Kind string

// Node kinds.
const (
	KindHost    Kind = "host"
	KindSwitch  Kind = "switch"
	KindStorage Kind = "storage"
)

// Role is a switch's place in the fabric.
type Role string

// Switch roles: RTSW, CTSW and ATSW form the back-end (rack, cluster and
// aggregation training switches, as in Meta's AI zones); RSW and FSW the
// front-end (rack and fabric switches).
const (
	RoleRTSW Role = "rtsw"
	RoleCTSW Role = "ctsw"
	RoleATSW Role = "atsw"
	RoleRSW  Role = "rsw"
	RoleFSW  Role = "fsw"
)

// Plane is the network a port, link or switch belongs to.
type Plane string

// Planes.
const (
	BE Plane = "be" // back-end: the RoCE training fabric
	FE Plane = "fe" // front-end: data, checkpoints, logging
)

// Plane returns the plane of a switch role.
func (r Role) Plane() Plane {
	switch r {
	case RoleRSW, RoleFSW:
		return FE
	}
	return BE
}

// Tier is the height of a role in the drawing and addressing: hosts and
// storage 0, RTSW/RSW 1, CTSW/FSW 2, ATSW 3.
func (r Role) Tier() int {
	switch r {
	case RoleRTSW, RoleRSW:
		return 1
	case RoleCTSW, RoleFSW:
		return 2
	case RoleATSW:
		return 3
	}
	return 0
}

// Node is a host, switch or storage node.
type Node struct {
	Name string `json:"name"`
	// Index is 1-based, in file order; it is part of MACs and interface names.
	Index int  `json:"index"`
	Kind  Kind `json:"kind"`
	// Role and Plane of a switch (hosts and storage: empty role; storage FE).
	Role  Role  `json:"role,omitempty"`
	Plane Plane `json:"plane,omitempty"`
	// GPUs of a host: ports gpu0..gpuN-1 are its back-end NICs.
	GPUs int `json:"gpus,omitempty"`
	// Zone and Rack as written or generated (0 = unset).
	Zone int `json:"zone,omitempty"`
	Rack int `json:"rack,omitempty"`
	// Machine pins the node to a machine of a lab that spans machines
	// ("" = placed by rack; see topologies/placement).
	Machine string `json:"machine,omitempty"`
	// Profile of a switch, shared with other switches of the same profile.
	Profile *Profile `json:"-"`
	// ProfileName of a switch.
	ProfileName string `json:"profile,omitempty"`
	// Ports: a host's gpu ports then fe0; a switch's in order of first use.
	Ports []*Port `json:"ports"`
	// Loopback (/32, /128) of a switch; invalid for hosts and storage.
	Loopback  netip.Addr `json:"loopback,omitzero"`
	Loopback6 netip.Addr `json:"loopback6,omitzero"`
	// Container is the user's container a host or storage node runs in
	// with the docker runtime; nil: the lab's own node image.
	Container *Container `json:"container,omitempty"`
	// Pos is where the node was written (zero when generated).
	Pos Pos `json:"-"`
}

// Port returns the node's port called name, or nil.
func (n *Node) Port(name string) *Port {
	for _, p := range n.Ports {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Port is one end of a link.
type Port struct {
	Node *Node  `json:"-"`
	Name string `json:"name"`
	// Index is 1-based within the node; it is part of MACs and interface names.
	Index int   `json:"index"`
	Plane Plane `json:"plane"`
	// Link and Peer: the link this port is on and the port at its other end.
	Link     *Link  `json:"-"`
	Peer     *Port  `json:"-"`
	PeerNode string `json:"peer_node"`
	PeerPort string `json:"peer_port"`
	// Rate, Delay (one-way propagation) and MTU (IP MTU, bytes) of the link.
	Rate  clock.Rate     `json:"rate"`
	Delay clock.Duration `json:"delay"`
	MTU   int            `json:"mtu"`
	// Addr is the port's address with the link's prefix length (/31);
	// Addr6 the IPv6 one (/127) when the plan has IPv6.
	Addr  netip.Prefix `json:"addr"`
	Addr6 netip.Prefix `json:"addr6,omitzero"`
	// MAC is locally administered and deterministic.
	MAC net.HardwareAddr `json:"mac"`
	// IfName is the kernel interface name (at most 15 bytes).
	IfName string `json:"ifname"`
	// Headroom is the PFC headroom of each lossless priority on this
	// (switch) port, resolved from the profile and the link; 0 elsewhere.
	Headroom int64 `json:"headroom,omitempty"`
}

// MarshalJSON writes the MAC as text (aa:bb:…), not base64.
func (p *Port) MarshalJSON() ([]byte, error) {
	type plain Port
	return json.Marshal(struct {
		*plain
		MAC string `json:"mac"`
	}{(*plain)(p), p.MAC.String()})
}

// ECN returns the ECN configuration of traffic class tc on this switch
// port, with thresholds scaled to the port's rate.
func (p *Port) ECN(tc int) ECN {
	if p.Node.Profile == nil {
		return ECN{}
	}
	e := p.Node.Profile.ECN[tc]
	e.Kmin, e.Kmax = e.At(p.Rate)
	e.ScaleRate = 0
	return e
}

// Link joins two ports.
type Link struct {
	// Index is 1-based in file order.
	Index int   `json:"index"`
	A     *Port `json:"-"`
	B     *Port `json:"-"`
	// AName and BName are "node:port".
	AName string         `json:"a"`
	BName string         `json:"b"`
	Plane Plane          `json:"plane"`
	Rate  clock.Rate     `json:"rate"`
	Delay clock.Duration `json:"delay"`
	MTU   int            `json:"mtu"`
	// Pos is where the link was written (zero when generated).
	Pos Pos `json:"-"`
}

// Summary counts what a topology holds.
type Summary struct {
	Name     string `json:"name"`
	Nodes    int    `json:"nodes"`
	Hosts    int    `json:"hosts"`
	GPUs     int    `json:"gpus"`
	Switches int    `json:"switches"`
	Storage  int    `json:"storage"`
	Links    int    `json:"links"`
	BELinks  int    `json:"be_links"`
	FELinks  int    `json:"fe_links"`
}

// Summary counts t's nodes, GPUs and links.
func (t *Topology) Summary() Summary {
	s := Summary{Name: t.Name, Nodes: len(t.Nodes), Links: len(t.Links)}
	for _, n := range t.Nodes {
		switch n.Kind {
		case KindHost:
			s.Hosts++
			s.GPUs += n.GPUs
		case KindSwitch:
			s.Switches++
		case KindStorage:
			s.Storage++
		}
	}
	for _, l := range t.Links {
		if l.Plane == BE {
			s.BELinks++
		} else {
			s.FELinks++
		}
	}
	return s
}
