package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/lab/emulation/datapath/verbs"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/switchmodel"
)

// Config is a node process's whole configuration, written by the lab as
// JSON:
//
//	{
//	  "kind": "switch", "name": "leaf1", "scale": 1000, "seed": 42,
//	  "socket": "/run/rocelab/mylab/leaf1.sock", "netns": "",
//	  "ports": [{"ifname": "leaf1-p1", "mac": "02:00:…", "peer_mac": "02:00:…",
//	             "rate_bps": 400000000000, "delay_ps": 1000000}],
//	  "switch": {…switchmodel.Config…},
//	  "routes": [{"Prefix": "10.0.0.0/31", "Ports": [0]}]
//	}
type Config struct {
	Kind nodeapi.Kind `json:"kind"`
	Name string       `json:"name"`
	// Scale is the scale factor k >= 1 (resolved: the lab turns
	// `scale: auto` into a number with emu.AutoScale).
	Scale int `json:"scale"`
	// Seed seeds the node's random streams; equal seeds give the
	// simulator's streams (Rand("switch/"+Name)).
	Seed uint64 `json:"seed"`
	// Socket is the API's Unix socket path (created 0600; its directory
	// should be root-only).
	Socket string `json:"socket"`
	// NetNS names the namespace whose interfaces the ports are; "" is the
	// process's own (the usual case: the lab starts the node inside it).
	NetNS string `json:"netns,omitempty"`
	// Origin is fabric time 0 in Unix nanoseconds (CLOCK_REALTIME), shared
	// by every node of a lab that spans machines; 0 = when the node starts.
	Origin int64 `json:"origin_unix_ns,omitempty"`
	// ExactLinks has the ports whose neighbour is a loop too (PeerLoop)
	// write and read frames with their sender's lateness (emu.Port.PeerLoop;
	// deploy.Options.ExactLinks).
	ExactLinks bool `json:"exact_links,omitempty"`
	// SocketLinks has a link between two members of one Group carry its
	// frames through its veth, as a link between two processes does,
	// instead of in memory from one model to the other (emu.Options.InLoopLinks;
	// deploy.Options.SocketLinks). A node of its own ignores it.
	SocketLinks bool         `json:"socket_links,omitempty"`
	Ports       []PortConfig `json:"ports"`
	// Switch and Routes configure a switch node; Loopbacks are its
	// loopback addresses, which with its ports' Addrs are its own: its
	// control plane answers ARP, neighbour solicitations and pings for
	// them (switchmodel/ctlplane), and it forwards nothing sent to them.
	Switch    *switchmodel.Config `json:"switch,omitempty"`
	Routes    RouteTable          `json:"routes,omitempty"`
	Loopbacks []netip.Addr        `json:"loopbacks,omitempty"`
	// NICs configure an endpoint node: NICs[i] is the RDMA NIC on
	// Ports[i] (see nodeplan.Endpoint).
	NICs []NICConfig `json:"nics,omitempty"`
	// Hosts are the lab's hosts and their RDMA NICs' addresses, which
	// rdma_cm resolves a program's peer addresses and names with (an
	// endpoint node; see verbs.Host).
	Hosts []verbs.Host `json:"hosts,omitempty"`
	// Mutant (tests only) names an endpoint.Mutant, a deliberate defect
	// of every NIC of an endpoint node, so that the compliance suite can
	// show it catches it through the node (lab/compliance/live). A lab
	// never sets it.
	Mutant string `json:"mutant,omitempty"`
}

// OriginTime is Origin as a time (zero when unset).
func (c *Config) OriginTime() time.Time {
	if c.Origin == 0 {
		return time.Time{}
	}
	return time.Unix(0, c.Origin)
}

// lead is the node loop's emu.Options.Lead: with exact links the loop
// runs ahead of the wall clock (docs/design.md, "The dilated loop",
// "Running ahead"), since the trailers tell the neighbours how early each
// frame was written; without them a frame written early would shorten its
// link, so the loop stays on the wall clock.
func (c *Config) lead() clock.Duration {
	if c.ExactLinks {
		return 0 // the default: a quarter of the shortest link delay
	}
	return -1
}

// PortConfig is one interface of the node; port i of the model is Ports[i].
type PortConfig struct {
	IfName string `json:"ifname"`
	// MAC is the port's address ("" = the interface's own); PeerMAC the
	// neighbour's, the destination of every frame the port sends.
	MAC     string `json:"mac,omitempty"`
	PeerMAC string `json:"peer_mac"`
	// Rate is the line rate in bits/s; Delay the link's one-way
	// propagation delay in picoseconds, applied to frames this port sends.
	Rate  clock.Rate     `json:"rate_bps"`
	Delay clock.Duration `json:"delay_ps"`
	// PeerLoop says the neighbour is a node's loop too (a switch, or an
	// endpoint's NIC), not a kernel interface: with Config.ExactLinks,
	// frames on the link carry how late they were written
	// (emu.Port.PeerLoop).
	PeerLoop bool `json:"peer_loop,omitempty"`
	// Addrs are a switch port's own addresses (its end of the link's /31,
	// and /127 with IPv6).
	Addrs []netip.Addr `json:"addrs,omitempty"`
}

// Load reads and validates a Config file.
func Load(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("node config: %w", err)
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return Config{}, fmt.Errorf("node config %s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("node config %s: %w", path, err)
	}
	return c, nil
}

// Write writes c as indented JSON, readable by root only.
func (c Config) Write(path string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("node config: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("node config: %w", err)
	}
	return nil
}

// Validate reports what is missing or inconsistent in c.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch c.Kind {
	case nodeapi.KindSwitch:
		if c.Switch == nil {
			bad("switch node without a switch config")
		}
		if c.Mutant != "" {
			bad("mutant %q on a switch node (endpoint nodes only)", c.Mutant)
		}
		for _, r := range c.Routes {
			for _, p := range r.Ports {
				if p < 0 || p >= len(c.Ports) {
					bad("route %v: port %d out of range", r.Prefix, p)
				}
			}
		}
	case nodeapi.KindEndpoint:
		c.validateEndpoint(bad)
		if c.Mutant != "" {
			if _, err := endpoint.ParseMutant(c.Mutant); err != nil {
				bad("mutant: %v", err)
			} else if !endpoint.MutantsBuilt {
				bad("mutant %s: %v", c.Mutant, endpoint.ErrNoMutants)
			}
		}
	default:
		bad("kind %q: want switch or endpoint", c.Kind)
	}
	if c.Name == "" {
		bad("no name")
	}
	if c.Scale < 1 {
		bad("scale %d: must be at least 1", c.Scale)
	}
	if c.Socket == "" || !filepath.IsAbs(c.Socket) {
		bad("socket %q: want an absolute path", c.Socket)
	}
	if len(c.Ports) == 0 {
		bad("no ports")
	}
	for i, p := range c.Ports {
		if p.IfName == "" {
			bad("port %d: no ifname", i)
		}
		if p.MAC != "" {
			if _, err := parseMAC(p.MAC); err != nil {
				bad("port %d (%s): mac: %v", i, p.IfName, err)
			}
		}
		if _, err := parseMAC(p.PeerMAC); err != nil {
			bad("port %d (%s): peer_mac: %v", i, p.IfName, err)
		}
		if p.Rate <= 0 {
			bad("port %d (%s): rate must be positive", i, p.IfName)
		}
		if p.Delay < 0 {
			bad("port %d (%s): delay must not be negative", i, p.IfName)
		}
	}
	return errors.Join(errs...)
}

func parseMAC(s string) ([6]byte, error) {
	var m [6]byte
	hw, err := net.ParseMAC(s)
	if err != nil {
		return m, err
	}
	if len(hw) != 6 {
		return m, fmt.Errorf("%q is not a 48-bit MAC", s)
	}
	copy(m[:], hw)
	return m, nil
}
