package topologies

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"

	"github.com/rocelab/rocelab/core/clock"
)

// resolver turns a decoded File into a Topology, collecting errors.
type resolver struct {
	e        *errs
	file     *File
	profiles map[string]*Profile
	defaults map[Plane]planeDefaults
	t        *Topology
	specOf   map[*Node]*NodeSpec
	// mentioned holds ports named by a link that failed: not "unlinked".
	mentioned map[*Port]bool
}

type planeDefaults struct {
	linkValues
	profile string
	at      Pos // where the defaults were written
}

// linkValues are a link's rate, delay and MTU: a plane's defaults, or a
// link's own.
type linkValues struct {
	rate  clock.Rate
	delay clock.Duration
	mtu   int
}

// withKeys returns v overridden by the rate, delay and mtu keys that a
// link or a plane's defaults give (w locates them), checked.
func (r *resolver) withKeys(v linkValues, w *Where, rate *Rate, delay *Duration, mtu *Size) linkValues {
	if rate != nil {
		v.rate = r.checkRate(clock.Rate(*rate), w.at("rate"))
	}
	if delay != nil {
		v.delay = clock.Duration(*delay)
	}
	if mtu != nil {
		v.mtu = r.checkMTU(int64(*mtu), w.at("mtu"))
	}
	return v
}

var nameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

func validName(s string) bool { return len(s) <= 40 && nameRE.MatchString(s) }

// Limits of the addressing plan: MACs carry a 16-bit node index and an 8-bit port index.
const (
	maxNodes = 65535
	maxPorts = 255
	minMTU   = 576
	maxMTU   = 9216
)

func (r *resolver) resolve() *Topology {
	f := r.file
	r.t = &Topology{Name: f.Name, Description: f.Description, byName: map[string]*Node{}, Profiles: map[string]*Profile{}}
	r.specOf = map[*Node]*NodeSpec{}
	r.mentioned = map[*Port]bool{}
	if !validName(f.Name) {
		r.e.add(f.at("name"), "bad topology name %q (want letters, digits, - and _, starting with a letter)", f.Name)
	}
	r.profiles = r.resolveProfiles(f.Profiles)
	r.resolveDefaults()
	r.checkContainerDefaults()

	var nodes []*NodeSpec
	var links []*LinkSpec
	if f.Generate != nil {
		gn, gl, err := Generate(f.Generate)
		if err != nil {
			r.e.add(f.Generate.At, "generate: %v", err)
		}
		for _, n := range gn {
			n.At = f.Generate.At
		}
		for _, l := range gl {
			l.At = f.Generate.At
		}
		nodes, links = gn, gl
	}
	explicit := make([]*NodeSpec, 0, len(f.Nodes))
	for _, n := range f.Nodes {
		explicit = append(explicit, n)
	}
	slices.SortFunc(explicit, func(a, b *NodeSpec) int {
		return cmp.Or(cmp.Compare(a.At.Line, b.At.Line), cmp.Compare(a.At.Col, b.At.Col))
	})
	nodes = append(nodes, explicit...)
	links = append(links, f.Links...)

	for _, ns := range nodes {
		r.resolveNode(ns)
	}
	if len(r.t.Nodes) > maxNodes {
		r.e.add(f.at("nodes"), "%d nodes: at most %d are supported", len(r.t.Nodes), maxNodes)
	}
	r.resolveLinks(links)
	r.checkUnlinked()
	r.checkBuffers()
	if len(r.e.list) == 0 {
		r.checkConnected(BE)
		r.checkConnected(FE)
	}
	if len(r.e.list) == 0 {
		at := f.at("addressing")
		if err := r.t.plan(r.file.Addressing, r.t.Name); err != nil {
			r.e.add(at, "addressing: %v", err)
		}
	}
	return r.t
}

func (r *resolver) resolveDefaults() {
	r.defaults = map[Plane]planeDefaults{
		BE: {linkValues: linkValues{rate: 400 * clock.Gbps, delay: clock.Microsecond, mtu: 4200}, profile: DefaultBE},
		FE: {linkValues: linkValues{rate: 100 * clock.Gbps, delay: clock.Microsecond, mtu: 1500}, profile: DefaultFE},
	}
	d := r.file.Defaults
	if d == nil {
		return
	}
	for plane, s := range map[Plane]*PlaneDefaultsSpec{BE: d.BE, FE: d.FE} {
		if s == nil {
			continue
		}
		pd := r.defaults[plane]
		pd.at = s.At
		pd.linkValues = r.withKeys(pd.linkValues, &s.Where, s.Rate, s.Delay, s.MTU)
		if s.Profile != "" {
			if _, ok := r.profiles[s.Profile]; !ok {
				r.e.add(s.at("profile"), "unknown profile %q%s", s.Profile, r.knownProfiles(r.file.Profiles))
			}
			pd.profile = s.Profile
		}
		r.defaults[plane] = pd
	}
}

func (r *resolver) checkRate(rate clock.Rate, at Pos) clock.Rate {
	if rate <= 0 {
		r.e.add(at, "rate must be positive")
	}
	if rate > 1600*clock.Gbps*8 {
		r.e.add(at, "rate %v is beyond any Ethernet link", rate)
	}
	return rate
}

func (r *resolver) checkMTU(mtu int64, at Pos) int {
	if mtu < minMTU || mtu > maxMTU {
		r.e.add(at, "mtu %d out of range %d..%d", mtu, minMTU, maxMTU)
	}
	return int(mtu)
}

func (r *resolver) resolveNode(s *NodeSpec) {
	if !validName(s.Name) {
		r.e.add(s.At, "bad node name %q (want letters, digits, - and _, starting with a letter, at most 40)", s.Name)
	}
	if old := r.t.byName[s.Name]; old != nil {
		r.e.add(s.At, "duplicate node name %q (also at line %d)", s.Name, old.Pos.Line)
		return
	}
	n := &Node{Name: s.Name, Index: len(r.t.Nodes) + 1, Kind: Kind(s.Kind), Zone: s.Zone, Rack: s.Rack, Machine: s.Machine, Pos: s.At}
	notFor := func(key string, set bool) {
		if set {
			r.e.add(s.at(key), "node %s: %s is not for a %s", s.Name, key, s.Kind)
		}
	}
	if s.Zone < 0 || s.Rack < 0 {
		r.e.add(s.At, "node %s: zone and rack must not be negative", s.Name)
	}
	if s.Machine != "" && !machineName(s.Machine) {
		r.e.add(s.at("machine"), "node %s: machine %q: want lower-case letters, digits, '.' and '-', starting with a letter or digit, at most 63", s.Name, s.Machine)
	}
	switch n.Kind {
	case KindHost:
		n.GPUs = 1
		if s.GPUs != nil {
			n.GPUs = *s.GPUs
			if n.GPUs < 1 || n.GPUs > 64 {
				r.e.add(s.at("gpus"), "node %s: gpus %d out of range 1..64", s.Name, n.GPUs)
				n.GPUs = max(1, min(n.GPUs, 64))
			}
		}
		for i := range n.GPUs {
			r.addPort(n, fmt.Sprintf("gpu%d", i), BE)
		}
		if s.Frontend == nil || *s.Frontend {
			r.addPort(n, "fe0", FE)
		}
		notFor("role", s.Role != "")
		notFor("profile", s.Profile != "")
		notFor("ports", s.Ports != nil)
		notFor("nics", s.NICs != nil)
		r.resolveContainer(n, s)
	case KindStorage:
		n.Plane = FE
		nics := 1
		if s.NICs != nil {
			nics = *s.NICs
			if nics < 1 || nics > 16 {
				r.e.add(s.at("nics"), "node %s: nics %d out of range 1..16", s.Name, nics)
				nics = max(1, min(nics, 16))
			}
		}
		for i := range nics {
			r.addPort(n, fmt.Sprintf("fe%d", i), FE)
		}
		notFor("role", s.Role != "")
		notFor("profile", s.Profile != "")
		notFor("ports", s.Ports != nil)
		notFor("gpus", s.GPUs != nil)
		notFor("frontend", s.Frontend != nil)
		r.resolveContainer(n, s)
	case KindSwitch:
		n.Role = Role(s.Role)
		switch n.Role {
		case RoleRTSW, RoleCTSW, RoleATSW, RoleRSW, RoleFSW:
		case "":
			r.e.add(s.At, "switch %s: role missing (rtsw, ctsw, atsw for the back-end; rsw, fsw for the front-end)", s.Name)
		default:
			r.e.add(s.at("role"), "switch %s: unknown role %q (want rtsw, ctsw, atsw, rsw or fsw)", s.Name, s.Role)
		}
		n.Plane = n.Role.Plane()
		n.ProfileName = s.Profile
		if n.ProfileName == "" {
			n.ProfileName = r.defaults[n.Plane].profile
		}
		n.Profile = r.profiles[n.ProfileName]
		if n.Profile == nil && s.Profile != "" {
			r.e.add(s.at("profile"), "switch %s: unknown profile %q%s", s.Name, s.Profile, r.knownProfiles(r.file.Profiles))
		}
		if n.Profile != nil {
			r.t.Profiles[n.ProfileName] = n.Profile
		}
		if s.Ports != nil && (*s.Ports < 1 || *s.Ports > maxPorts) {
			r.e.add(s.at("ports"), "switch %s: ports %d out of range 1..%d", s.Name, *s.Ports, maxPorts)
		}
		notFor("gpus", s.GPUs != nil)
		notFor("frontend", s.Frontend != nil)
		notFor("nics", s.NICs != nil)
		for _, k := range containerKeys {
			if _, ok := s.Keys[k]; ok {
				r.e.add(s.at(k), "node %s: %s is not for a switch (a switch runs the lab's switch model)", s.Name, k)
			}
		}
	case "":
		r.e.add(s.At, "node %s: kind missing (host, switch or storage)", s.Name)
	default:
		r.e.add(s.at("kind"), "node %s: unknown kind %q (want host, switch or storage)", s.Name, s.Kind)
	}
	r.t.Nodes = append(r.t.Nodes, n)
	r.t.byName[n.Name] = n
	r.specOf[n] = s
}

func (r *resolver) addPort(n *Node, name string, plane Plane) *Port {
	p := &Port{Node: n, Name: name, Index: len(n.Ports) + 1, Plane: plane}
	n.Ports = append(n.Ports, p)
	return p
}

// checkUnlinked reports host and storage NICs without a link and switches without any.
func (r *resolver) checkUnlinked() {
	for _, n := range r.t.Nodes {
		if n.Kind == KindSwitch {
			if len(n.Ports) == 0 {
				r.e.add(n.Pos, "switch %s has no links", n.Name)
			}
			continue
		}
		for _, p := range n.Ports {
			if p.Link == nil && !r.mentioned[p] {
				hint := ""
				if n.Kind == KindHost && p.Plane == FE {
					hint = " (add a link, or frontend: false)"
				}
				r.e.add(n.Pos, "%s %s: NIC %s has no link%s", n.Kind, n.Name, p.Name, hint)
			}
		}
	}
}

// checkBuffers sizes each switch port's headroom and checks that headroom
// and reserved bytes fit the switch's buffer.
func (r *resolver) checkBuffers() {
	for _, n := range r.t.Nodes {
		if n.Kind != KindSwitch || n.Profile == nil {
			continue
		}
		pfc := n.Profile.PFC
		var headroom int64
		for _, p := range n.Ports {
			if pfc.Enabled() {
				p.Headroom = pfc.HeadroomFor(p.Rate, p.Delay, p.MTU)
			}
			headroom += p.Headroom * int64(pfc.LosslessCount())
		}
		reserve := pfc.Reserve * NumTC * int64(len(n.Ports))
		if headroom+reserve >= n.Profile.Buffer {
			r.e.add(n.Pos, "switch %s: PFC headroom %s plus reserved %s (%d ports) does not fit the buffer %s of profile %s",
				n.Name, FormatSize(headroom), FormatSize(reserve), len(n.Ports), FormatSize(n.Profile.Buffer), n.ProfileName)
		}
	}
}

// checkConnected reports a plane whose hosts cannot all reach each other.
func (r *resolver) checkConnected(plane Plane) {
	var start *Node
	seen := map[*Node]bool{}
	for _, n := range r.t.Nodes {
		if n.Kind != KindSwitch && r.hasPlane(n, plane) {
			start = n
			break
		}
	}
	if start == nil {
		return
	}
	queue := []*Node{start}
	seen[start] = true
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, p := range n.Ports {
			if p.Plane != plane || p.Peer == nil || seen[p.Peer.Node] {
				continue
			}
			// Traffic does not transit hosts or storage.
			seen[p.Peer.Node] = true
			if p.Peer.Node.Kind == KindSwitch {
				queue = append(queue, p.Peer.Node)
			}
		}
	}
	for _, n := range r.t.Nodes {
		if n.Kind != KindSwitch && r.hasPlane(n, plane) && !seen[n] {
			r.e.add(n.Pos, "%s network is not connected: %s cannot reach %s", map[Plane]string{BE: "back-end", FE: "front-end"}[plane], n.Name, start.Name)
			return
		}
	}
}

func (r *resolver) hasPlane(n *Node, plane Plane) bool {
	for _, p := range n.Ports {
		if p.Plane == plane {
			return true
		}
	}
	return false
}

// machineName reports whether s is a valid machine name: a DNS label
// (Kubernetes node names are) of lower-case letters, digits, '.' and '-'.
func machineName(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i, c := range []byte(s) {
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '-') {
			return false
		}
	}
	return true
}
