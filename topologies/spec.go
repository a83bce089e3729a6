package topologies

// The spec types are a topology file as written: the decoder fills them
// from the YAML tree (unknown keys are errors) and records where every
// value was written; resolve turns them into a Topology. The JSON Schema
// (schema.json) is generated from these types and their comments.

// Where records where a spec value was written: At is the position of the
// value itself, Keys the position of each key's value (and of each element
// of a list or entry of a map written under that key, as "key.index" or
// "key.mapkey").
type Where struct {
	At   Pos
	Keys map[string]Pos
}

// at returns the position of key k, or of the whole value when k was not written.
func (w *Where) at(k string) Pos {
	if p, ok := w.Keys[k]; ok {
		return p
	}
	return w.At
}

// File is a rocelab topology file.
type File struct {
	Where `yaml:"-"`
	// Name of the topology; defaults to the file name without .yaml.
	Name string `yaml:"name,omitempty"`
	// Free-text description, shown by rocelab validate.
	Description string `yaml:"description,omitempty"`
	// Link and profile defaults for the back-end and front-end planes.
	Defaults *DefaultsSpec `yaml:"defaults,omitempty"`
	// Address pools; the defaults come from the benchmarking range 198.18.0.0/15.
	Addressing *AddressingSpec `yaml:"addressing,omitempty"`
	// Named switch profiles, usable in addition to the built-in default-be and default-fe.
	Profiles map[string]*ProfileSpec `yaml:"profiles,omitempty"`
	// A generator expanded at load time: its nodes and links come before the explicit ones.
	Generate *GenerateSpec `yaml:"generate,omitempty"`
	// Nodes by name: hosts, switches and storage nodes.
	Nodes map[string]*NodeSpec `yaml:"nodes,omitempty"`
	// Links, each "node:port -- node:port" or a mapping with link, rate, delay, mtu, count.
	Links []*LinkSpec `yaml:"links,omitempty"`
}

// DefaultsSpec holds per-plane defaults.
type DefaultsSpec struct {
	Where `yaml:"-"`
	// Back-end (RoCE) plane defaults; built-in: rate 400G, delay 1us, mtu 4200, profile default-be.
	BE *PlaneDefaultsSpec `yaml:"be,omitempty"`
	// Front-end plane defaults; built-in: rate 100G, delay 1us, mtu 1500, profile default-fe.
	FE *PlaneDefaultsSpec `yaml:"fe,omitempty"`
	// Container of every host that names none (docker runtime): image, cmd, env, binds.
	Host *ContainerSpec `yaml:"host,omitempty"`
	// Container of every storage node that names none (docker runtime): image, cmd, env, binds.
	Storage *ContainerSpec `yaml:"storage,omitempty"`
}

// PlaneDefaultsSpec is the default link parameters and switch profile of one plane.
type PlaneDefaultsSpec struct {
	Where `yaml:"-"`
	// Link rate, e.g. 400G or 100Gbps.
	Rate *Rate `yaml:"rate,omitempty"`
	// One-way propagation delay of a link, e.g. 1us or 500ns.
	Delay *Duration `yaml:"delay,omitempty"`
	// IP MTU of the link in bytes (the frame adds 18 bytes of Ethernet header and FCS).
	MTU *Size `yaml:"mtu,omitempty"`
	// Profile of the plane's switches that do not name one.
	Profile string `yaml:"profile,omitempty"`
}

// NodeSpec is one node. The node's name is its key under nodes.
type NodeSpec struct {
	Where `yaml:"-"`
	// Name is the key under nodes (or given by a generator).
	Name string `yaml:"-"`
	// What the node is: a GPU server, a switch, or a front-end storage node.
	Kind string `yaml:"kind" jsonschema:"enum=host,enum=switch,enum=storage"`
	// host: number of GPUs, each with its own back-end RDMA NIC (ports gpu0, gpu1, …); default 1.
	GPUs *int `yaml:"gpus,omitempty" jsonschema:"minimum=1,maximum=64"`
	// host: whether it has a front-end NIC (port fe0); default true.
	Frontend *bool `yaml:"frontend,omitempty"`
	// storage: number of front-end NICs (ports fe0, fe1, …); default 1.
	NICs *int `yaml:"nics,omitempty" jsonschema:"minimum=1,maximum=16"`
	// switch: its role; rtsw, ctsw, atsw are back-end, rsw, fsw front-end.
	Role string `yaml:"role,omitempty" jsonschema:"enum=rtsw,enum=ctsw,enum=atsw,enum=rsw,enum=fsw"`
	// switch: name of its profile (built-in or under profiles); default from defaults.be/fe.
	Profile string `yaml:"profile,omitempty"`
	// switch: number of ports; when given, links beyond it are an error.
	Ports *int `yaml:"ports,omitempty" jsonschema:"minimum=1,maximum=255"`
	// AI zone the node belongs to (generators set it; used for drawing).
	Zone int `yaml:"zone,omitempty" jsonschema:"minimum=0"`
	// Rack the node belongs to (generators set it; used for drawing).
	Rack int `yaml:"rack,omitempty" jsonschema:"minimum=0"`
	// The machine that runs the node when a lab spans machines (pins the placement; its rack follows it). Default: placed by rack.
	Machine string `yaml:"machine,omitempty" jsonschema:"pattern=^[a-z0-9][a-z0-9.-]{0,62}$"`
	// host, storage: the user's container image the node runs in (docker runtime; present locally, never pulled).
	Image string `yaml:"image,omitempty"`
	// host, storage: the container's command, replacing the image's CMD; it must keep running.
	Cmd []string `yaml:"cmd,omitempty"`
	// host, storage: environment variables of the container, merged over defaults.host/storage.env.
	Env map[string]string `yaml:"env,omitempty"`
	// host, storage: bind mounts "HOST:CONTAINER[:ro|rw]"; a relative HOST is relative to the topology file.
	Binds []string `yaml:"binds,omitempty"`
}

// ContainerSpec is the container a kind of node runs in with the docker
// runtime (under defaults.host and defaults.storage); a node's own image,
// cmd, env and binds keys override it key by key.
type ContainerSpec struct {
	Where `yaml:"-"`
	// The user's container image (present locally, never pulled).
	Image string `yaml:"image,omitempty"`
	// The container's command, replacing the image's CMD; it must keep running.
	Cmd []string `yaml:"cmd,omitempty"`
	// Environment variables of the container.
	Env map[string]string `yaml:"env,omitempty"`
	// Bind mounts "HOST:CONTAINER[:ro|rw]"; a relative HOST is relative to the topology file.
	Binds []string `yaml:"binds,omitempty"`
}

// LinkSpec is one link (or count parallel links). It is written either as a
// string "host1:gpu0 -- rtsw1:p1" or as a mapping whose link key holds that
// string, with optional rate, delay, mtu and count. A switch or storage end
// may omit its port ("rtsw1"): the next free port pN is taken.
type LinkSpec struct {
	Where `yaml:"-"`
	// The two ends: "node:port -- node:port".
	Link string `yaml:"link"`
	// The two ends as a list, as containerlab writes them
	// (endpoints: ["host1:gpu0", "rtsw1:p1"]); instead of link.
	Endpoints []string `yaml:"endpoints,omitempty" jsonschema:"minItems=2,maxItems=2"`
	// Rate of this link; default from the plane's defaults.
	Rate *Rate `yaml:"rate,omitempty"`
	// One-way propagation delay; default from the plane's defaults.
	Delay *Duration `yaml:"delay,omitempty"`
	// IP MTU in bytes; default from the plane's defaults.
	MTU *Size `yaml:"mtu,omitempty"`
	// Number of parallel links between the two nodes (ends must omit ports); default 1.
	Count *int `yaml:"count,omitempty" jsonschema:"minimum=1"`
}

// AddressingSpec overrides the address pools. Links take /31 (IPv4) and
// /127 (IPv6) subnets from their plane's pool in link order; switches take
// a /32 (/128) loopback each from the loopback pool.
type AddressingSpec struct {
	Where `yaml:"-"`
	// IPv4 pool of back-end links; default 198.18.0.0/16.
	BE string `yaml:"be,omitempty"`
	// IPv4 pool of front-end links; default 198.19.0.0/17.
	FE string `yaml:"fe,omitempty"`
	// IPv4 pool of switch loopbacks; default 198.19.128.0/20.
	Loopback string `yaml:"loopback,omitempty"`
	// Also give every port an IPv6 address from the IPv6 pools; default false.
	IPv6 bool `yaml:"ipv6,omitempty"`
	// IPv6 pool of back-end links; default 2001:2::/64 (RFC 5180 benchmarking range).
	BE6 string `yaml:"be6,omitempty"`
	// IPv6 pool of front-end links; default 2001:2:0:1::/64.
	FE6 string `yaml:"fe6,omitempty"`
	// IPv6 pool of switch loopbacks; default 2001:2:0:ff::/64.
	Loopback6 string `yaml:"loopback6,omitempty"`
}

// GenerateSpec describes a Clos AI zone (zones: 1) or several zones joined
// by an ATSW layer, with the front-end network beside them.
type GenerateSpec struct {
	Where `yaml:"-"`
	// Number of AI zones; more than one needs atsw. Default 1.
	Zones *int `yaml:"zones,omitempty" jsonschema:"minimum=1"`
	// Hosts per zone.
	Hosts *int `yaml:"hosts" jsonschema:"minimum=1"`
	// GPUs (back-end NICs) per host; default 8.
	GPUs *int `yaml:"gpus,omitempty" jsonschema:"minimum=1,maximum=64"`
	// Rack training switches (leaves) per zone.
	RTSW *int `yaml:"rtsw" jsonschema:"minimum=1"`
	// Cluster training switches (spines) per zone.
	CTSW *int `yaml:"ctsw" jsonschema:"minimum=1"`
	// RTSW downlink:uplink bandwidth ratio, e.g. 1, 2 or "2:1"; default 1.
	Oversubscription *Ratio `yaml:"oversubscription,omitempty"`
	// How GPU NICs attach: rack (all NICs of a host to its rack's RTSW) or rail (NIC i to leaf i). Default rack.
	Attach string `yaml:"attach,omitempty" jsonschema:"enum=rack,enum=rail"`
	// Aggregation training switches joining the zones (needed when zones > 1).
	ATSW *int `yaml:"atsw,omitempty" jsonschema:"minimum=1"`
	// CTSW downlink:uplink bandwidth ratio towards the ATSW layer; default 1.
	ZoneOversubscription *Ratio `yaml:"zone-oversubscription,omitempty"`
	// The front-end network; "off" for none. Default: one RSW per rack, no FSW, no storage.
	FE *FESpec `yaml:"fe,omitempty"`
}

// FESpec is the generated front-end network: RSWs under an FSW layer, with
// storage nodes on the FSWs (or on the RSWs when there is no FSW layer).
type FESpec struct {
	Where `yaml:"-"`
	// Off is set by writing fe: off.
	Off bool `yaml:"-"`
	// Rack switches per zone; default one per rack.
	RSW *int `yaml:"rsw,omitempty" jsonschema:"minimum=1"`
	// Fabric switches above the RSWs (shared by all zones); default 0, or 1 with several RSWs or zones.
	FSW *int `yaml:"fsw,omitempty" jsonschema:"minimum=0"`
	// Storage nodes; default 0.
	Storage *int `yaml:"storage,omitempty" jsonschema:"minimum=0"`
}
