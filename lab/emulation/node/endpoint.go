package node

import (
	"fmt"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/cmagent"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
	"github.com/rocelab/rocelab/lab/emulation/datapath/verbs"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// NICConfig is one RDMA NIC of an endpoint node, on the port of the same
// index.
type NICConfig struct {
	// Name is the NIC's name, "host:port" ("host1:gpu0"), as the simulator
	// names it; it labels telemetry and seeds the NIC's random stream
	// ("nic/"+Name).
	Name string `json:"name"`
	// IP is the NIC's address (the plan's BE address).
	IP string `json:"ip"`
	// MTU is the RDMA payload per packet (0 = 4096).
	MTU int `json:"mtu,omitempty"`
}

// validateEndpoint checks the endpoint part of c.
func (c Config) validateEndpoint(bad func(string, ...any)) {
	if c.Switch != nil || len(c.Routes) > 0 {
		bad("endpoint node with a switch config or routes")
	}
	if len(c.NICs) != len(c.Ports) {
		bad("%d NICs for %d ports", len(c.NICs), len(c.Ports))
	}
	seen := map[string]bool{}
	for i, nc := range c.NICs {
		if nc.Name == "" {
			bad("nic %d: no name", i)
		}
		if seen[nc.Name] {
			bad("nic %d: name %q used twice", i, nc.Name)
		}
		seen[nc.Name] = true
		if _, err := netip.ParseAddr(nc.IP); err != nil {
			bad("nic %d (%s): ip: %v", i, nc.Name, err)
		}
		if nc.MTU != 0 && (nc.MTU < 256 || nc.MTU > 8192) {
			bad("nic %d (%s): mtu %d out of [256, 8192]", i, nc.Name, nc.MTU)
		}
	}
}

// epState is an endpoint node's models and jobs. Everything but the
// change notifier lives on the loop goroutine.
type epState struct {
	n      *Node
	nics   []*endpoint.NIC
	pds    []*endpoint.PD
	qps    map[int]*epQP
	nextQP int
	jobs   map[int]*job
	nextJb int
	// closed are the owners (QPRequest.Owner) whose QPs were deleted by
	// owner: a create of theirs that arrives later (sent before the
	// caller gave up) is refused, so it cannot leave a QP behind. The
	// oldest are forgotten beyond maxClosedOwners.
	closed      map[string]bool
	closedOrder []string
	// leases are the owners' lease ends (QPRequest.LeaseMS): expireLeases
	// stops and deletes what an owner that stopped renewing holds.
	leases map[string]time.Time
	// verbs serves the NICs to programs on the host (rocelab's
	// libibverbs); its QPs count against the same per-NIC limit.
	verbs *verbs.Server
	// cm are the compliance adapter's CM consumers, by NIC
	// (cm_adapter_api.go).
	cm map[int]*cmagent.Agent

	mu      sync.Mutex
	version uint64
	changed chan struct{}
}

// epQP is a QP created through the API, with its CQ and buffer.
type epQP struct {
	id     int
	nic    int
	qp     *endpoint.QP
	cq     *endpoint.CQ
	mr     *endpoint.MR // nil without a buffer
	buf    []byte
	remote nodeapi.BufferInfo
	peer   netip.Addr        // the address it was connected to (a UD QP's SENDs go there)
	onWC   func(endpoint.WC) // the job using the QP
	wcs    []endpoint.WC     // completions kept for the adapter (no job)
	busy   int               // id of the job using the QP (0: none)
	owner  string            // QPRequest.Owner
}

// newEndpoint builds an endpoint node: a Loop over the ports and one raw
// NIC per port.
func newEndpoint(cfg Config, io IO, log *slog.Logger) (*Node, error) {
	ports := emuPorts(cfg, io)
	loop, err := emu.New(emu.Options{Name: cfg.Name, Scale: cfg.Scale, Seed: cfg.Seed, Ports: ports, Waiter: io.Waiter, Origin: cfg.OriginTime(), Lead: cfg.lead()})
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", cfg.Name, err)
	}
	return newEndpointOn(cfg, loop, 0, ports, loop, true, log)
}

// newEndpointOn builds an endpoint node whose ports (ports, Keep set:
// the NICs own the frames they build) are loop's ports base …; share and
// leader as for newSwitch.
func newEndpointOn(cfg Config, loop *emu.Loop, base int, ports []emu.Port, share telemetry.Source, leader bool, log *slog.Logger) (*Node, error) {
	var err error
	n := &Node{cfg: cfg, log: log, loop: loop, base: base, share: share, caps: map[int]*capture{}}
	n.fx = newFaultSet(&n.cfg, loop, base)
	ep := &epState{n: n, qps: map[int]*epQP{}, jobs: map[int]*job{}, changed: make(chan struct{})}
	reg := endpoint.CCRegistry()
	var mutant endpoint.Mutant
	if cfg.Mutant != "" {
		if mutant, err = endpoint.ParseMutant(cfg.Mutant); err != nil {
			return nil, fmt.Errorf("node %s: %w", cfg.Name, err)
		}
		log.Warn("endpoint node runs a mutant of the reference (tests only)", "mutant", cfg.Mutant)
	}
	for i, nc := range cfg.NICs {
		ip, _ := netip.ParseAddr(nc.IP)
		nic, err := endpoint.NewNIC(endpoint.Options{
			Name: nc.Name, Sched: loop, Rand: loop.Rand("nic/" + nc.Name),
			LineRate: cfg.Ports[i].Rate, MAC: ports[i].MAC, IP: ip, MTU: nc.MTU, Raw: true, CC: reg, Mutant: mutant,
			Tailroom: emu.TrailerLen, ReturnRx: loop.TakeBack(base + i),
		})
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", cfg.Name, err)
		}
		nic.Attach(n.fx.connect(i, nic)) // NIC → fault chain → loop
		loop.SetRelease(base+i, nic.Release)
		ep.nics = append(ep.nics, nic)
		ep.pds = append(ep.pds, nic.AllocPD())
		n.srcs = append(n.srcs, nic)
	}
	n.srcs = append(n.srcs, ep, n.fx)
	if leader {
		n.srcs = append(n.srcs, procStats{cfg.Name})
	}
	n.ep = ep
	var vn []verbs.NIC
	for i, nc := range cfg.NICs {
		vn = append(vn, verbs.NIC{NIC: ep.nics[i], Name: nc.Name, MAC: ports[i].MAC, MTU: max(nc.MTU, 0)})
		if vn[i].MTU == 0 {
			vn[i].MTU = 4096
		}
	}
	ep.verbs = verbs.New(verbs.Options{NICs: vn, Loop: loop, Scale: cfg.Scale, MaxQPs: nodeapi.MaxQPsPerNIC,
		Used: ep.qpsOn, Log: log, HostName: cfg.Name, Hosts: cfg.Hosts})
	return n, nil
}

// nicIndex resolves a NIC name ("host1:gpu0"), its port part ("gpu0"),
// its ifname or a 0-based index.
func (ep *epState) nicIndex(s string) (int, error) {
	for i, nc := range ep.n.cfg.NICs {
		_, port, _ := strings.Cut(nc.Name, ":")
		if nc.Name == s || port == s || ep.n.cfg.Ports[i].IfName == s {
			return i, nil
		}
	}
	if i, err := strconv.Atoi(s); err == nil && i >= 0 && i < len(ep.nics) {
		return i, nil
	}
	return 0, badRequest("no NIC %q", s)
}

// bump tells waiting pollers that a job changed (loop goroutine).
func (ep *epState) bump() {
	ep.mu.Lock()
	ep.version++
	close(ep.changed)
	ep.changed = make(chan struct{})
	ep.mu.Unlock()
}

// watch returns the current version and a channel closed at the next
// change.
func (ep *epState) watch() (uint64, <-chan struct{}) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.version, ep.changed
}
