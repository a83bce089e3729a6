package topologies

import (
	"bytes"
	"errors"
	"fmt"
	"math"
)

// Generate expands a generator into explicit nodes and links (explicit
// switch ports p1, p2, … in order of use), in this order: per zone the
// hosts, RTSWs and CTSWs; the ATSWs; per zone the RSWs; the FSWs; the
// storage nodes. Links: host GPU links (host by host), RTSW–CTSW, CTSW–ATSW,
// host FE links, RSW–FSW, storage.
func Generate(g *GenerateSpec) ([]*NodeSpec, []*LinkSpec, error) {
	p, err := g.params()
	if err != nil {
		return nil, nil, err
	}
	b := &builder{next: map[string]int{}}
	b.build(p)
	if err := b.portBudget(p); err != nil {
		return nil, nil, err
	}
	return b.nodes, b.links, nil
}

// roleCount is the generator parameter that sets how many switches of a
// role there are (more switches, fewer ports each).
func roleCount(p *genParams, role string) *int {
	switch role {
	case "rtsw":
		return &p.rtsw
	case "ctsw":
		return &p.ctsw
	case "atsw":
		return &p.atsw
	case "rsw":
		return &p.rsw
	case "fsw":
		return &p.fsw
	}
	return nil
}

// over is the first switch with more than maxPorts ports, and how many.
func (b *builder) over() (*NodeSpec, int) {
	for _, n := range b.nodes {
		if n.Kind == "switch" && b.next[n.Name] > maxPorts {
			return n, b.next[n.Name]
		}
	}
	return nil, 0
}

// portBudget fails a generated topology with a switch of more than
// maxPorts ports, saying which parameter to raise and to what: "rtsw1
// would need 256 ports (at most 255): use rtsw 8 or more (--rtsw 8)".
func (b *builder) portBudget(p genParams) error {
	n, ports := b.over()
	if n == nil {
		return nil
	}
	msg := fmt.Sprintf("%s would need %d ports (at most %d)", n.Name, ports, maxPorts)
	if k := fitCount(p, n.Role); k > 0 {
		return fmt.Errorf("%s: use %s %d or more (--%s %d)", msg, n.Role, k, n.Role, k)
	}
	return fmt.Errorf("%s: use more %s switches, fewer hosts or GPUs per zone, or more zones (multizone)", msg, n.Role)
}

// FitCount returns the smallest number of role's switches (rtsw, ctsw,
// atsw, rsw, fsw), above g's own, with which g generates a topology that
// validates with the default profiles (no switch past its ports or its
// buffer), or 0 if none is found.
func FitCount(g *GenerateSpec, role string) int {
	p, err := g.params()
	if err != nil {
		return 0
	}
	return fitCount(p, role)
}

// maxFitNICs bounds the fabrics fitCount searches (each try generates
// the whole fabric, about 0.1 s per 10,000 NICs, some 16 times): past it,
// the error suggests the direction at once instead (a 65,536-NIC search
// took 30 s).
const maxFitNICs = 1 << 14

func fitCount(p genParams, role string) int {
	cur := roleCount(&p, role)
	if cur == nil || p.zones*p.hosts*p.gpus > maxFitNICs {
		return 0
	}
	// Candidates in order: every count, or for rail leaves multiples of
	// the GPUs per host (one leaf per rail).
	step := 1
	if role == "rtsw" && p.rail {
		step = p.gpus
	}
	at := func(i int) int { return (*cur/step + i) * step }
	limit := 64 * 1024 / step
	if role == "rtsw" && !p.rail || role == "rsw" {
		limit = min(limit, (p.hosts-*cur)/step)
	}
	build := func(k int) *builder {
		q := p
		*roleCount(&q, role) = k
		t := &builder{next: map[string]int{}}
		t.build(q)
		return t
	}
	// Ports per switch of role fall as their count grows: search the
	// smallest count whose switches fit their ports.
	fits := func(i int) bool {
		t := build(at(i))
		for _, n := range t.nodes {
			if n.Role == role && t.next[n.Name] > maxPorts {
				return false
			}
		}
		return true
	}
	if limit < 1 || !fits(limit) {
		return 0
	}
	lo, hi := 1, limit
	for lo < hi {
		if mid := (lo + hi) / 2; fits(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	// Then, on topologies small enough to check here, the first count
	// from there that validates whole (buffers and headroom too).
	if p.zones*p.hosts*p.gpus > 4096 {
		return at(lo)
	}
	for i := lo; i <= min(limit, lo+16); i++ {
		t := build(at(i))
		var buf bytes.Buffer
		if WriteExplicit(&buf, "fit", "", nil, t.nodes, t.links) != nil {
			return 0
		}
		if _, err := Parse("fit.yaml", buf.Bytes()); err == nil {
			return at(i)
		}
	}
	return 0
}

// genParams are a GenerateSpec with defaults applied and checked.
type genParams struct {
	zones, hosts, gpus, rtsw, ctsw, atsw int
	over, zoneOver                       float64
	rail                                 bool
	fe                                   bool
	rsw, fsw, storage                    int
}

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

func (g *GenerateSpec) params() (genParams, error) {
	p := genParams{
		zones: intOr(g.Zones, 1), hosts: intOr(g.Hosts, 0), gpus: intOr(g.GPUs, 8),
		rtsw: intOr(g.RTSW, 0), ctsw: intOr(g.CTSW, 0), atsw: intOr(g.ATSW, 0),
		over: 1, zoneOver: 1, fe: true,
	}
	if g.Oversubscription != nil {
		p.over = float64(*g.Oversubscription)
	}
	if g.ZoneOversubscription != nil {
		p.zoneOver = float64(*g.ZoneOversubscription)
	}
	var errs []error
	need := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	need(p.zones >= 1 && p.zones <= 64, "zones %d out of range 1..64", p.zones)
	need(p.hosts >= 1, "hosts missing or below 1")
	need(p.gpus >= 1 && p.gpus <= 64, "gpus %d out of range 1..64", p.gpus)
	need(p.rtsw >= 1, "rtsw missing or below 1")
	need(p.ctsw >= 1, "ctsw missing or below 1")
	need(p.atsw >= 0, "atsw must not be negative")
	need(p.zones == 1 || p.atsw >= 1, "%d zones need an ATSW layer (atsw)", p.zones)
	need(p.over > 0 && p.over <= 64, "oversubscription %g out of range (0, 64]", p.over)
	need(p.zoneOver > 0 && p.zoneOver <= 64, "zone-oversubscription %g out of range (0, 64]", p.zoneOver)
	switch g.Attach {
	case "", "rack":
		need(p.rtsw <= p.hosts, "rack attach: %d RTSWs for %d hosts leaves racks empty", p.rtsw, p.hosts)
	case "rail":
		p.rail = true
		need(p.gpus > 0 && p.rtsw%p.gpus == 0, "rail attach: rtsw (%d) must be a multiple of gpus (%d), one leaf per rail", p.rtsw, p.gpus)
		need(p.gpus == 0 || p.rtsw/max(1, p.gpus) <= p.hosts, "rail attach: more rail groups than hosts")
	default:
		need(false, "attach %q: want rack or rail", g.Attach)
	}
	if len(errs) > 0 {
		return p, errors.Join(errs...)
	}
	defRSW := p.rtsw
	if p.rail {
		defRSW = (p.hosts + 7) / 8
	}
	if fe := g.FE; fe != nil && fe.Off {
		p.fe = false
	} else {
		if fe == nil {
			fe = &FESpec{}
		}
		p.rsw = intOr(fe.RSW, defRSW)
		defFSW := 0
		if p.rsw*p.zones > 1 {
			defFSW = 1
		}
		p.fsw = intOr(fe.FSW, defFSW)
		p.storage = intOr(fe.Storage, 0)
		need(p.rsw >= 1 && p.rsw <= p.hosts, "fe: rsw %d out of range 1..%d (hosts)", p.rsw, p.hosts)
		need(p.fsw >= 0, "fe: fsw must not be negative")
		need(p.storage >= 0, "fe: storage must not be negative")
		need(p.fsw >= 1 || p.rsw*p.zones == 1, "fe: %d RSWs need an FSW layer (fsw)", p.rsw*p.zones)
	}
	if p.hosts*p.zones > 16384 {
		errs = append(errs, fmt.Errorf("%d hosts: at most 16384 are generated", p.hosts*p.zones))
	}
	return p, errors.Join(errs...)
}

// uplinks is how many uplinks a switch with down downlinks gets at
// oversubscription over, rounded up to a multiple of spines so ECMP is even.
func uplinks(down int, over float64, spines int) int {
	u := int(math.Ceil(float64(down)/over - 1e-9))
	u = max(u, 1)
	return (u + spines - 1) / spines * spines
}

type builder struct {
	nodes []*NodeSpec
	links []*LinkSpec
	next  map[string]int
}

func (b *builder) node(n *NodeSpec) string {
	b.nodes = append(b.nodes, n)
	return n.Name
}

// port returns the next free port of switch sw.
func (b *builder) port(sw string) string {
	b.next[sw]++
	return fmt.Sprintf("%s:p%d", sw, b.next[sw])
}

func (b *builder) link(a, c string) {
	b.links = append(b.links, &LinkSpec{Link: a + " -- " + c})
}

func (b *builder) build(p genParams) {
	pfx := func(z int) string {
		if p.zones == 1 {
			return ""
		}
		return fmt.Sprintf("z%d-", z)
	}
	ptr := func(v int) *int { return &v }
	hosts := make([][]string, p.zones+1)
	rtsws := make([][]string, p.zones+1)
	ctsws := make([][]string, p.zones+1)
	groups := p.rtsw / p.gpus // rail groups
	for z := 1; z <= p.zones; z++ {
		for h := range p.hosts {
			rack := h*p.rtsw/p.hosts + 1
			if p.rail {
				rack = h*groups/p.hosts + 1
				if p.fe {
					rack = h*p.rsw/p.hosts + 1
				}
			}
			n := &NodeSpec{Name: fmt.Sprintf("%shost%d", pfx(z), h+1), Kind: "host", GPUs: ptr(p.gpus), Zone: z, Rack: rack}
			if !p.fe {
				f := false
				n.Frontend = &f
			}
			hosts[z] = append(hosts[z], b.node(n))
		}
		for i := range p.rtsw {
			n := &NodeSpec{Name: fmt.Sprintf("%srtsw%d", pfx(z), i+1), Kind: "switch", Role: "rtsw", Zone: z}
			if !p.rail {
				n.Rack = i + 1
			}
			rtsws[z] = append(rtsws[z], b.node(n))
		}
		for i := range p.ctsw {
			ctsws[z] = append(ctsws[z], b.node(&NodeSpec{Name: fmt.Sprintf("%sctsw%d", pfx(z), i+1), Kind: "switch", Role: "ctsw", Zone: z}))
		}
	}
	var atsws []string
	for i := range p.atsw {
		atsws = append(atsws, b.node(&NodeSpec{Name: fmt.Sprintf("atsw%d", i+1), Kind: "switch", Role: "atsw"}))
	}
	rsws := make([][]string, p.zones+1)
	var fsws, storage []string
	if p.fe {
		for z := 1; z <= p.zones; z++ {
			for i := range p.rsw {
				rsws[z] = append(rsws[z], b.node(&NodeSpec{Name: fmt.Sprintf("%srsw%d", pfx(z), i+1), Kind: "switch", Role: "rsw", Zone: z, Rack: i + 1}))
			}
		}
		for i := range p.fsw {
			fsws = append(fsws, b.node(&NodeSpec{Name: fmt.Sprintf("fsw%d", i+1), Kind: "switch", Role: "fsw"}))
		}
		for i := range p.storage {
			storage = append(storage, b.node(&NodeSpec{Name: fmt.Sprintf("st%d", i+1), Kind: "storage"}))
		}
	}

	// Back-end.
	for z := 1; z <= p.zones; z++ {
		down := make([]int, p.rtsw)
		for h, host := range hosts[z] {
			for g := range p.gpus {
				leaf := h * p.rtsw / p.hosts
				if p.rail {
					leaf = (h*groups/p.hosts)*p.gpus + g
				}
				b.link(fmt.Sprintf("%s:gpu%d", host, g), b.port(rtsws[z][leaf]))
				down[leaf]++
			}
		}
		for i, r := range rtsws[z] {
			for u := range uplinks(down[i], p.over, p.ctsw) {
				b.link(b.port(r), b.port(ctsws[z][u%p.ctsw]))
			}
		}
	}
	if p.atsw > 0 {
		for z := 1; z <= p.zones; z++ {
			for _, c := range ctsws[z] {
				for u := range uplinks(b.next[c], p.zoneOver, p.atsw) {
					b.link(b.port(c), b.port(atsws[u%p.atsw]))
				}
			}
		}
	}
	// Front-end.
	if !p.fe {
		return
	}
	for z := 1; z <= p.zones; z++ {
		for h, host := range hosts[z] {
			b.link(host+":fe0", b.port(rsws[z][h*p.rsw/p.hosts]))
		}
	}
	for z := 1; z <= p.zones; z++ {
		for _, r := range rsws[z] {
			for _, f := range fsws {
				b.link(b.port(r), b.port(f))
			}
		}
	}
	attach := fsws
	if len(attach) == 0 {
		attach = rsws[1]
	}
	for i, s := range storage {
		b.link(s+":fe0", b.port(attach[i%len(attach)]))
	}
}
