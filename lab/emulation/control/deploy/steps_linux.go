package deploy

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/lifecycle"
	"github.com/rocelab/rocelab/lab/emulation/datapath/links"
	"github.com/rocelab/rocelab/topologies"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

func netnsRuntime() sandbox.Runtime { return &netns.Runtime{} }

// recordNodes records the namespaces of every node, in one write, after
// checking that none exists (a leftover, or someone else's: the lab must
// not take it over). It returns their IDs, in node order.
func (d *deployer) recordNodes() ([]int, error) {
	objs := make([]state.Object, len(d.local))
	for i, n := range d.local {
		name := state.NetnsName(d.name, n.Name)
		if netns.Exists(name) {
			return nil, fmt.Errorf("node %s: namespace %s exists already (a leftover? rocelab destroy --all)", n.Name, name)
		}
		objs[i] = state.Object{Kind: state.KindNetns, Node: n.Name, Name: name}
	}
	return d.intendAll(objs)
}

// createNode creates node n's namespace, recorded as id, and tags its
// loopback (as lifecycle.CreateNetns does).
func (d *deployer) createNode(n *topologies.Node, id int) error {
	name := state.NetnsName(d.name, n.Name)
	if err := netns.Create(name); err != nil {
		if errors.Is(err, os.ErrExist) {
			// Made by someone else since recordNodes looked: not ours
			// to roll back.
			d.mu.Lock()
			d.books.Forget(id)
			d.mu.Unlock()
		}
		return err
	}
	if err := lifecycle.TagNetns(d.name, n.Name, name); err != nil {
		return err
	}
	d.mu.Lock()
	d.ns[n.Name] = name
	d.mu.Unlock()
	return nil
}

// end is the veth end of port p.
func (d *deployer) end(p *topologies.Port) links.End {
	d.mu.Lock()
	ns := d.ns[p.Node.Name]
	d.mu.Unlock()
	// IPv6 stays on only where the kernel owns an IPv6 FE address.
	keep6 := p.Node.Kind != topologies.KindSwitch && p.Plane == topologies.FE && p.Addr6.IsValid()
	return links.End{NetNS: ns, Name: p.IfName, MAC: p.MAC, Alias: state.IfAlias(d.name, p.Node.Name, p.Name), NoIPv6: !keep6}
}

// veth is link l's pair.
func (d *deployer) veth(l *topologies.Link) links.Veth {
	return links.Veth{A: d.end(l.A), B: d.end(l.B), MTU: l.MTU + LinkOverhead}
}

// recordLinks records every link's veth pair, in one write. The pairs
// stay recorded as intents: rollback removes intents and created objects
// alike, and both ends of a pair are born inside recorded namespaces.
func (d *deployer) recordLinks() error {
	objs := make([]state.Object, len(d.links))
	for i, l := range d.links {
		if tun, ok := d.tunnel(l); ok {
			p := l.A
			if !d.here(p.Node) {
				p = l.B
			}
			objs[i] = state.Object{Kind: state.KindLink, Node: p.Node.Name, Port: p.Name, Name: tun.End.Name, NetNS: tun.End.NetNS}
			continue
		}
		v := d.veth(l)
		objs[i] = state.Object{
			Kind: state.KindVeth, Node: l.A.Node.Name, Port: l.A.Name,
			Name: v.A.Name, NetNS: v.A.NetNS, Peer: v.B.Name, PeerNetNS: v.B.NetNS,
		}
	}
	_, err := d.intendAll(objs)
	return err
}

// createLink creates link l's veth pair, or this machine's end of it
// when it crosses machines (recorded by recordLinks).
func (d *deployer) createLink(l *topologies.Link) error {
	if tun, ok := d.tunnel(l); ok {
		return d.maker.CreateTunnel(tun)
	}
	return d.maker.Create(d.veth(l))
}

// linksUp waits until every end the link step made is operationally up,
// and counts the wait in the link step's time.
func (d *deployer) linksUp() error {
	start := time.Now()
	err := d.maker.WaitUp(10 * time.Second)
	if n := len(d.timing); n > 0 && d.timing[n-1].Step == StepLink {
		d.timing[n-1].Elapsed += time.Since(start)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", StepLink, err)
	}
	return nil
}

// address configures the FE NICs of host or storage node n: the link's
// exact MTU, the plan's address(es), a permanent neighbour entry for the
// gateway and a route to the FE pool through the first FE NIC.
func (d *deployer) address(n *topologies.Node) error {
	d.mu.Lock()
	ns := d.ns[n.Name]
	d.mu.Unlock()
	h, err := netns.Handle(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	routed := false
	for _, p := range n.Ports {
		if p.Plane != topologies.FE || p.Peer == nil {
			continue
		}
		l, err := h.LinkByName(p.IfName)
		if err != nil {
			return fmt.Errorf("find %s: %w", p.IfName, err)
		}
		if err := h.LinkSetMTU(l, p.MTU); err != nil {
			return fmt.Errorf("set MTU of %s: %w", p.IfName, err)
		}
		type fam struct {
			addr, gw netip.Prefix
			pool     netip.Prefix
			family   int
		}
		fams := []fam{{p.Addr, p.Peer.Addr, d.t.Plan.FE, netlink.FAMILY_V4}}
		if p.Addr6.IsValid() && p.Peer.Addr6.IsValid() && d.t.Plan.FE6.IsValid() {
			fams = append(fams, fam{p.Addr6, p.Peer.Addr6, d.t.Plan.FE6, netlink.FAMILY_V6})
		}
		for _, f := range fams {
			if !f.addr.IsValid() {
				continue
			}
			a := &netlink.Addr{IPNet: ipNet(f.addr)}
			if f.family == netlink.FAMILY_V6 {
				a.Flags = unix.IFA_F_NODAD
			}
			if err := h.AddrAdd(l, a); err != nil {
				return fmt.Errorf("address %s on %s: %w", f.addr, p.IfName, err)
			}
			gw := net.IP(f.gw.Addr().AsSlice())
			neigh := &netlink.Neigh{LinkIndex: l.Attrs().Index, Family: f.family, State: netlink.NUD_PERMANENT, IP: gw, HardwareAddr: p.Peer.MAC}
			if err := h.NeighSet(neigh); err != nil {
				return fmt.Errorf("neighbour %s on %s: %w", gw, p.IfName, err)
			}
			if routed {
				continue
			}
			r := &netlink.Route{LinkIndex: l.Attrs().Index, Dst: ipNet(f.pool.Masked()), Gw: gw}
			if err := h.RouteReplace(r); err != nil {
				return fmt.Errorf("route %s via %s on %s: %w", f.pool, gw, p.IfName, err)
			}
		}
		routed = true
		nd := d.nodes[n.Name]
		nd.Addresses = append(nd.Addresses, p.Addr.String())
		if len(fams) > 1 {
			nd.Addresses = append(nd.Addresses, p.Addr6.String())
		}
	}
	return nil
}

func ipNet(p netip.Prefix) *net.IPNet {
	a := p.Addr()
	return &net.IPNet{IP: net.IP(a.AsSlice()), Mask: net.CIDRMask(p.Bits(), a.BitLen())}
}

// teardown stops the node processes and deletes the namespaces that l
// records, in parallel, without forgetting them: a fast first pass before
// lifecycle's rollback, which then finds them gone. Deleting a namespace
// takes its veth ends with it in one batch in the kernel, where deleting
// veths one by one costs a network-wide synchronisation each.
func teardown(l *state.Lab, grace time.Duration) {
	objs := l.Objects()
	run := func(kind state.Kind, fn func(o state.Object)) {
		var wg sync.WaitGroup
		sem := make(chan struct{}, 16)
		for _, o := range objs {
			if o.Kind != kind {
				continue
			}
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				fn(o)
			})
		}
		wg.Wait()
	}
	run(state.KindProcess, func(o state.Object) {
		if o.PID != 0 {
			proc.Process{PID: o.PID, StartTime: o.StartTime}.Stop(grace)
		}
	})
	// A link that crosses machines is a VXLAN device whose VNI the
	// underlay namespace holds until the device is gone: deleted here, at
	// once, rather than with its namespace by the kernel's asynchronous
	// teardown, so that the lab can be deployed again right away.
	run(state.KindLink, func(o state.Object) {
		links.Delete(o.NetNS, o.Name)
	})
	run(state.KindNetns, func(o state.Object) {
		// A namespace with processes still inside (an intent-only node
		// process) is left to lifecycle, which finds them by executable.
		if len(netns.Processes(o.Name, nil)) == 0 {
			netns.Delete(o.Name)
		}
	})
}
