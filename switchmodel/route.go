package switchmodel

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"net/netip"
	"slices"

	"github.com/rocelab/rocelab/wire"
)

// fib is a longest-prefix-match table probed from the longest prefix length
// in use down, so a lookup costs one map probe per distinct length present
// (typically /32, /31, /0).
//
// Sized for data-center fabrics (a switch of a 1,024-host Clos holds
// thousands of prefixes): prefixes are numbered (Prefixes: the fabric's,
// shared by its switches, or the switch's own), routes live by value in one
// slice indexed by those numbers, and the maps hold only the numbers, so
// the table has no pointers for the collector to scan; IPv4 prefixes are
// keyed by one integer (address<<8 | length), the fast path of the
// runtime's maps; port sets are interned (thousands of prefixes, a handful
// of next-hop sets); and a small direct-mapped cache in front of the IPv4
// maps remembers the route of recently seen destination addresses, so a
// packet usually costs one probe of a 2 KiB array instead of a miss and a
// hit in a large map.
type fib struct {
	// prefixes numbers the routes' prefixes; shared says it is the
	// fabric's (Options.Prefixes), whose numbers other switches' prefixes
	// take too.
	prefixes *Prefixes
	shared   bool
	// routes is each prefix's equal-cost egress ports, by prefix number:
	// an index into sets, -1 where the switch has no route (4 bytes an
	// entry, no pointers). rr is the next port of each route's
	// round-robin spraying, made at the first sprayed packet (a fabric
	// that does not spray does not pay for it).
	routes  []int32
	rr      []int32
	sets    [][]int          // interned port sets; never modified
	setIdx  map[string]int32 // index into sets by encoded set
	scratch []int            // add's merge buffer
	key     []byte           // intern's key buffer
	cache   [fibCacheSize]fibCacheEntry
	cached  bool // some cache entry may be filled (add clears them then)
}

// fibCacheSize is the number of entries of the destination cache (16 KiB):
// enough for an aggregation switch of a 1,024-host fabric to keep most of
// the destinations it sees.
const (
	fibCacheBits = 10
	fibCacheSize = 1 << fibCacheBits
)

// fibCacheEntry maps an IPv4 destination to its route: idx is the index
// into routes plus one (0 for an empty entry), set the route's port set,
// and one its only port when the set has one (-1 otherwise), so that a hit
// on a single-path route touches nothing else.
type fibCacheEntry struct {
	addr uint32
	idx  int32
	set  int32
	one  int32
}

// fibKey is a masked IPv6 prefix in plain integers (cheaper to hash than
// netip.Prefix).
type fibKey struct {
	hi, lo uint64
	bits   uint8
}

// key4 is the IPv4 map key of the bits long prefix of address v.
func key4(v uint32, bits int) uint64 {
	if bits < 32 {
		v &^= 1<<(32-bits) - 1
	}
	return uint64(v)<<8 | uint64(bits)
}

func addr4(a netip.Addr) uint32 {
	b := a.As4()
	return binary.BigEndian.Uint32(b[:])
}

func key6(a netip.Addr, bits int) fibKey {
	b := a.As16()
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	switch {
	case bits == 0:
		hi, lo = 0, 0
	case bits < 64:
		hi &^= 1<<(64-bits) - 1
		lo = 0
	case bits < 128:
		lo &^= 1<<(128-bits) - 1
	}
	return fibKey{hi: hi, lo: lo, bits: uint8(bits)}
}

// reserve makes room for n4 IPv4 and n6 IPv6 routes, so that a table
// filled all at once does not grow step by step; it does nothing once
// routes were added.
func (f *fib) reserve(n4, n6 int) {
	if len(f.routes) > 0 {
		return
	}
	if !f.shared && f.prefixes.Len() == 0 {
		f.prefixes = NewPrefixes(n4, n6)
	}
	f.routes = make([]int32, 0, n4+n6)
}

func (f *fib) add(pfx netip.Prefix, ports []int) {
	set := int32(-1)
	f.place(pfx, ports, &set)
}

// addAll adds one route over ports per prefix of pfxs (each masked): add
// for each, with the port set interned once for all the new routes.
func (f *fib) addAll(pfxs []netip.Prefix, ports []int) {
	set := int32(-1)
	for _, pfx := range pfxs {
		f.place(pfx.Masked(), ports, &set)
	}
}

// place adds the route pfx over ports (merge says what *set is).
func (f *fib) place(pfx netip.Prefix, ports []int, set *int32) {
	if f.setIdx == nil {
		f.setIdx = make(map[string]int32)
	}
	if f.cached {
		f.cache = [fibCacheSize]fibCacheEntry{}
		f.cached = false
	}
	if a := pfx.Addr(); a.Is4In6() {
		pfx = netip.PrefixFrom(a.Unmap(), max(0, pfx.Bits()-96))
	}
	i := f.prefixes.number(pfx)
	for int(i) >= len(f.routes) {
		f.routes = append(f.routes, -1)
	}
	f.merge(i, ports, set)
}

// merge gives route i the port set ports: a new route (set -1) takes *set,
// interning ports (without repeats, in order) into it first if it is -1;
// an existing route's set is merged with ports (its ports first).
func (f *fib) merge(i int32, ports []int, set *int32) {
	r := &f.routes[i]
	if *r < 0 && *set >= 0 {
		*r = *set
		return
	}
	merged := f.scratch[:0]
	if *r >= 0 {
		merged = append(merged, f.sets[*r]...)
	}
	for _, p := range ports {
		if !slices.Contains(merged, p) {
			merged = append(merged, p)
		}
	}
	f.scratch = merged
	fresh := *r < 0
	*r = f.intern(merged)
	if fresh {
		*set = *r
	}
}

// intern returns the index of the port set ps (in its order) in f.sets,
// adding it if it is new.
func (f *fib) intern(ps []int) int32 {
	k := f.key[:0]
	for _, p := range ps {
		k = binary.LittleEndian.AppendUint32(k, uint32(p))
	}
	f.key = k
	if i, ok := f.setIdx[string(k)]; ok {
		return i
	}
	i := int32(len(f.sets))
	f.sets = append(f.sets, slices.Clone(ps))
	f.setIdx[string(k)] = i
	return i
}

// hit returns the cache entry of route i for address v.
func (f *fib) hit(v uint32, i int32) fibCacheEntry {
	set := f.routes[i]
	one := int32(-1)
	if ps := f.sets[set]; len(ps) == 1 {
		one = int32(ps[0])
	}
	return fibCacheEntry{addr: v, idx: i + 1, set: set, one: one}
}

// lookup returns the route of a as a cache entry (idx 0: no route).
func (f *fib) lookup(a netip.Addr) fibCacheEntry {
	if a.Is4In6() {
		a = a.Unmap()
	}
	if a.Is4() {
		v := addr4(a)
		c := &f.cache[(uint64(v)*0x9E3779B97F4A7C15)>>(64-fibCacheBits)]
		if c.idx != 0 && c.addr == v {
			return *c
		}
		for _, l := range f.prefixes.lens4 {
			if i, ok := f.prefixes.v4[key4(v, l)]; ok && f.has(i) {
				*c = f.hit(v, i)
				f.cached = true
				return *c
			}
		}
		return fibCacheEntry{}
	}
	for _, l := range f.prefixes.lens6 {
		if i, ok := f.prefixes.v6[key6(a, l)]; ok && f.has(i) {
			return f.hit(0, i)
		}
	}
	return fibCacheEntry{}
}

// has reports whether the switch has a route numbered i: with a shared
// numbering, another switch's prefix may have none here.
func (f *fib) has(i int32) bool { return int(i) < len(f.routes) && f.routes[i] >= 0 }

// route picks p's egress port: longest-prefix match on the destination,
// then among equal-cost ports either spraying (per packet) or the flow hash.
func (s *Switch) route(p *wire.Packet) (int, bool) {
	if !p.DstIP.IsValid() {
		return 0, false
	}
	c := s.fib.lookup(p.DstIP)
	if c.idx == 0 {
		return 0, false
	}
	if c.one >= 0 {
		return int(c.one), true
	}
	ports := s.fib.sets[c.set]
	n := len(ports)
	if s.spray[p.DSCP&63] {
		if s.cfg.ECMP.SprayRandom {
			return ports[s.rng.IntN(n)], true
		}
		f := &s.fib
		if len(f.rr) < len(f.routes) {
			f.rr = append(f.rr, make([]int32, len(f.routes)-len(f.rr))...)
		}
		r := &f.rr[c.idx-1]
		i := *r
		*r = (*r + 1) % int32(n)
		return ports[i], true
	}
	return s.hashPick(p, ports), true
}

// hashPick is the port of ports (one route's equal-cost set) that p's flow
// hash picks.
func (s *Switch) hashPick(p *wire.Packet, ports []int) int {
	hi, _ := bits.Mul64(s.flowHash(p), uint64(len(ports)))
	return ports[hi]
}

// flowHash hashes the 5-tuple (and the destination QP when QP-aware) with
// the switch's seed: each 64-bit word is folded in with a multiply-xorshift
// step and the result finalised with the splitmix64 mixer.
func (s *Switch) flowHash(p *wire.Packet) uint64 {
	src, dst := p.SrcIP.As16(), p.DstIP.As16()
	h := s.hashSeed
	h = fold(h, binary.LittleEndian.Uint64(src[0:8]))
	h = fold(h, binary.LittleEndian.Uint64(src[8:16]))
	h = fold(h, binary.LittleEndian.Uint64(dst[0:8]))
	h = fold(h, binary.LittleEndian.Uint64(dst[8:16]))
	w := uint64(p.SrcPort)<<32 | uint64(p.DstPort)<<16 | uint64(p.Protocol)
	h = fold(h, w)
	if s.cfg.ECMP.QPAware {
		h = fold(h, uint64(p.DestQP&0xFFFFFF))
	}
	return mix64(h)
}

func fold(h, w uint64) uint64 {
	h ^= w
	h *= 0x9E3779B97F4A7C15
	return h ^ h>>29
}

func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// Route is one forwarding entry of a switch: a prefix and its equal-cost
// egress ports. switchmodel/fabric computes a fabric's routes from its
// topology; a switch node receives its own in its configuration.
type Route struct {
	Prefix netip.Prefix
	// Ports are the egress ports, ascending: 0-based indices into the
	// switch's ports (topology port Index − 1), which are also the switch
	// model's port numbers.
	Ports []int
}

// NextHops returns the egress ports the switch sends p's flow on, without
// forwarding anything: the one port the flow hash picks (the same lookup
// and hash as forwarding), or, when p's class is sprayed per packet, every
// equal-cost port (sprayed true; the round-robin is not advanced), over
// which the flow's packets spread evenly. It is what a flow-level
// simulator asks for a flow's path.
func (s *Switch) NextHops(p *wire.Packet) (ports []int, sprayed bool, err error) {
	if !p.DstIP.IsValid() {
		return nil, false, errors.New("no route")
	}
	c := s.fib.lookup(p.DstIP)
	if c.idx == 0 {
		return nil, false, errors.New("no route")
	}
	if c.one == localPort {
		return nil, false, errors.New("addressed to the switch")
	}
	if c.one >= 0 {
		return []int{int(c.one)}, false, nil
	}
	set := s.fib.sets[c.set]
	if s.spray[p.DSCP&63] {
		return slices.Clone(set), true, nil
	}
	return []int{s.hashPick(p, set)}, false, nil
}

// NextHopsAmong returns what NextHops answers for p when the switch's
// table routes p's destination over set (the route's equal-cost egress
// ports, in the table's order), without looking the route up: for a
// caller that computed the route itself (fabric.SimOptions.RoutesOnDemand).
// The same hash and spraying as forwarding.
func (s *Switch) NextHopsAmong(p *wire.Packet, set []int) (ports []int, sprayed bool) {
	switch {
	case len(set) == 1:
		return []int{set[0]}, false
	case s.spray[p.DSCP&63]:
		return slices.Clone(set), true
	}
	return []int{s.hashPick(p, set)}, false
}
