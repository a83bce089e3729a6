package topologies

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/big"
	"net"
	"net/netip"
	"regexp"
	"strconv"
)

// Plan is a lab's addressing plan: pools, and the lab-name hash that makes
// MACs and interface names of different labs differ.
//
// Every link gets a /31 (and, with IPv6, a /127) of its plane's pool, in
// link order within the plane: the BE is routed L3 to the NIC, so each
// link is its own subnet. The end higher in the fabric (switch over host,
// CTSW over RTSW, ATSW over CTSW) takes the even address, the lower end the
// odd one; for equal tiers the link's first end takes the even one. Each
// switch takes a /32 (/128) loopback from the loopback pool, in node order,
// starting at the pool's first address + 1.
//
// MACs are 02:HH:HH:NN:NN:PP (locally administered, unicast): HHHH the
// 16-bit lab hash, NNNN the node index, PP the port index. Interface names
// are "rl" + 3 hex digits of the hash + "-" + node index + "p" + port index,
// e.g. rl3fa-12p3: at most 15 bytes for 65535 nodes of 255 ports.
type Plan struct {
	// Lab is the lab name MACs and interface names derive from.
	Lab string `json:"lab"`
	// Hash is the 16-bit FNV-1a hash of Lab.
	Hash uint16 `json:"hash"`
	// IfPrefix starts every interface name of the lab ("rl3fa-").
	IfPrefix string `json:"if_prefix"`
	// IPv4 pools.
	BE       netip.Prefix `json:"be"`
	FE       netip.Prefix `json:"fe"`
	Loopback netip.Prefix `json:"loopback"`
	// IPv6 pools; invalid when the plan is IPv4 only.
	BE6       netip.Prefix `json:"be6,omitzero"`
	FE6       netip.Prefix `json:"fe6,omitzero"`
	Loopback6 netip.Prefix `json:"loopback6,omitzero"`
}

// Default address pools: the benchmarking ranges 198.18.0.0/15 (RFC 2544)
// and 2001:2::/48 (RFC 5180), which no real network routes.
var (
	DefaultBEPool        = netip.MustParsePrefix("198.18.0.0/16")
	DefaultFEPool        = netip.MustParsePrefix("198.19.0.0/17")
	DefaultLoopbackPool  = netip.MustParsePrefix("198.19.128.0/20")
	DefaultBE6Pool       = netip.MustParsePrefix("2001:2::/64")
	DefaultFE6Pool       = netip.MustParsePrefix("2001:2:0:1::/64")
	DefaultLoopback6Pool = netip.MustParsePrefix("2001:2:0:ff::/64")
)

// LabHash is the 16-bit hash of a lab name used in MACs and interface names.
func LabHash(lab string) uint16 {
	h := fnv.New32a()
	h.Write([]byte(lab))
	s := h.Sum32()
	return uint16(s ^ s>>16)
}

// IfPrefix is the prefix of every interface name of lab.
func IfPrefix(lab string) string { return fmt.Sprintf("rl%03x-", LabHash(lab)&0xfff) }

// IfName is the interface name of port index port of node index node in lab.
func IfName(lab string, node, port int) string {
	return fmt.Sprintf("%s%dp%d", IfPrefix(lab), node, port)
}

var ifNameRE = regexp.MustCompile(`^rl([0-9a-f]{3})-([0-9]+)p([0-9]+)$`)

// ParseIfName recognises a rocelab interface name: it returns the 12-bit
// lab hash (the low bits of LabHash), node and port index.
func ParseIfName(name string) (hash uint16, node, port int, ok bool) {
	m := ifNameRE.FindStringSubmatch(name)
	if m == nil {
		return 0, 0, 0, false
	}
	h, _ := strconv.ParseUint(m[1], 16, 16)
	node, _ = strconv.Atoi(m[2])
	port, _ = strconv.Atoi(m[3])
	return uint16(h), node, port, true
}

// Owns reports whether ifname is an interface name of this plan's lab.
func (p Plan) Owns(ifname string) bool {
	return len(ifname) > len(p.IfPrefix) && ifname[:len(p.IfPrefix)] == p.IfPrefix && ifNameRE.MatchString(ifname)
}

// MAC is the MAC address of port index port of node index node for lab hash h.
func MAC(h uint16, node, port int) net.HardwareAddr {
	m := net.HardwareAddr{0x02, 0, 0, 0, 0, byte(port)}
	binary.BigEndian.PutUint16(m[1:3], h)
	binary.BigEndian.PutUint16(m[3:5], uint16(node))
	return m
}

// Address re-plans MACs, interface names and addresses for the lab called
// lab (Load plans for a lab named like the topology). It is deterministic:
// the same topology and lab name give the same plan.
func (t *Topology) Address(lab string) error {
	pools := t.Plan
	return t.assign(pools, lab)
}

// plan builds the pools from the file's addressing block and assigns.
func (t *Topology) plan(s *AddressingSpec, lab string) error {
	p := Plan{BE: DefaultBEPool, FE: DefaultFEPool, Loopback: DefaultLoopbackPool}
	if s != nil {
		parse := func(key, v string, dst *netip.Prefix, v6 bool) error {
			if v == "" {
				return nil
			}
			pr, err := netip.ParsePrefix(v)
			if err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			if pr.Addr().Is6() != v6 {
				return fmt.Errorf("%s: %s is not an IPv%s prefix", key, v, map[bool]string{true: "6", false: "4"}[v6])
			}
			if pr.Masked() != pr {
				return fmt.Errorf("%s: %s has host bits set (want %s)", key, v, pr.Masked())
			}
			*dst = pr
			return nil
		}
		if s.IPv6 || s.BE6 != "" || s.FE6 != "" || s.Loopback6 != "" {
			p.BE6, p.FE6, p.Loopback6 = DefaultBE6Pool, DefaultFE6Pool, DefaultLoopback6Pool
		}
		for _, f := range []struct {
			key string
			v   string
			dst *netip.Prefix
			v6  bool
		}{{"be", s.BE, &p.BE, false}, {"fe", s.FE, &p.FE, false}, {"loopback", s.Loopback, &p.Loopback, false},
			{"be6", s.BE6, &p.BE6, true}, {"fe6", s.FE6, &p.FE6, true}, {"loopback6", s.Loopback6, &p.Loopback6, true}} {
			if err := parse(f.key, f.v, f.dst, f.v6); err != nil {
				return err
			}
		}
	}
	pools := []netip.Prefix{p.BE, p.FE, p.Loopback, p.BE6, p.FE6, p.Loopback6}
	names := []string{"be", "fe", "loopback", "be6", "fe6", "loopback6"}
	for i := range pools {
		for j := i + 1; j < len(pools); j++ {
			if pools[i].IsValid() && pools[j].IsValid() && pools[i].Overlaps(pools[j]) {
				return fmt.Errorf("pools %s (%s) and %s (%s) overlap", names[i], pools[i], names[j], pools[j])
			}
		}
	}
	return t.assign(p, lab)
}

// assign fills every port's address, MAC and interface name.
func (t *Topology) assign(p Plan, lab string) error {
	p.Lab, p.Hash, p.IfPrefix = lab, LabHash(lab), IfPrefix(lab)
	count := map[Plane]int{}
	for _, l := range t.Links {
		count[l.Plane]++
	}
	switches := 0
	for _, n := range t.Nodes {
		if n.Kind == KindSwitch {
			switches++
		}
	}
	check := func(name string, pool netip.Prefix, need int, per int) error {
		if !pool.IsValid() {
			return nil
		}
		if have := capacity(pool, per); have.Cmp(big.NewInt(int64(need))) < 0 {
			return fmt.Errorf("pool %s %s holds %v, the topology needs %d", name, pool, have, need)
		}
		return nil
	}
	for _, c := range []error{
		check("be", p.BE, count[BE], 2), check("fe", p.FE, count[FE], 2), check("loopback", p.Loopback, switches+1, 1),
		check("be6", p.BE6, count[BE], 2), check("fe6", p.FE6, count[FE], 2), check("loopback6", p.Loopback6, switches+1, 1),
	} {
		if c != nil {
			return c
		}
	}
	idx := map[Plane]int{}
	for _, l := range t.Links {
		i := idx[l.Plane]
		idx[l.Plane]++
		pool, pool6 := p.BE, p.BE6
		if l.Plane == FE {
			pool, pool6 = p.FE, p.FE6
		}
		hi, lo := l.A, l.B
		if tier(l.B.Node) > tier(l.A.Node) {
			hi, lo = l.B, l.A
		}
		base := nth(pool.Addr(), int64(2*i))
		hi.Addr = netip.PrefixFrom(base, base.BitLen()-1)
		lo.Addr = netip.PrefixFrom(base.Next(), base.BitLen()-1)
		if pool6.IsValid() {
			b6 := nth(pool6.Addr(), int64(2*i))
			hi.Addr6 = netip.PrefixFrom(b6, 127)
			lo.Addr6 = netip.PrefixFrom(b6.Next(), 127)
		}
	}
	sw := 0
	for _, n := range t.Nodes {
		n.Loopback, n.Loopback6 = netip.Addr{}, netip.Addr{}
		if n.Kind == KindSwitch {
			sw++
			n.Loopback = nth(p.Loopback.Addr(), int64(sw))
			if p.Loopback6.IsValid() {
				n.Loopback6 = nth(p.Loopback6.Addr(), int64(sw))
			}
		}
		for _, port := range n.Ports {
			port.MAC = MAC(p.Hash, n.Index, port.Index)
			port.IfName = IfName(lab, n.Index, port.Index)
		}
	}
	t.Plan = p
	return nil
}

func tier(n *Node) int { return n.Role.Tier() }

// capacity is how many blocks of per addresses pool holds.
func capacity(pool netip.Prefix, per int) *big.Int {
	c := new(big.Int).Lsh(big.NewInt(1), uint(pool.Addr().BitLen()-pool.Bits()))
	return c.Div(c, big.NewInt(int64(per)))
}

// nth returns a + n.
func nth(a netip.Addr, n int64) netip.Addr {
	b := a.AsSlice()
	v := new(big.Int).SetBytes(b)
	v.Add(v, big.NewInt(n))
	out := v.FillBytes(make([]byte, len(b)))
	r, _ := netip.AddrFromSlice(out)
	return r
}
