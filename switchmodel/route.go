package switchmodel

import (
	"encoding/binary"
	"math/bits"
	"net/netip"
	"slices"

	"github.com/rocelab/rocelab/wire"
)

// route is one FIB entry: the equal-cost egress ports of a prefix.
type route struct {
	ports []int
	rr    int // next port for round-robin spraying
}

// fib is a longest-prefix-match table: one hash map keyed by (masked
// address, length), probed from the longest length in use down, so a
// lookup costs one map probe per distinct length present (typically /32,
// /24, /0).
type fib struct {
	routes map[fibKey]*route
	lens4  []int // prefix lengths in use for IPv4, longest first
	lens6  []int
}

// fibKey is a masked prefix in plain integers (cheaper to hash than
// netip.Prefix). IPv4 prefixes keep the address in lo and set v4.
type fibKey struct {
	hi, lo uint64
	bits   uint8
	v4     bool
}

func keyOf(a netip.Addr, bits int) fibKey {
	if a.Is4() {
		b := a.As4()
		v := binary.BigEndian.Uint32(b[:])
		if bits < 32 {
			v &^= 1<<(32-bits) - 1
		}
		return fibKey{lo: uint64(v), bits: uint8(bits), v4: true}
	}
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

func (f *fib) add(pfx netip.Prefix, ports []int) {
	if f.routes == nil {
		f.routes = make(map[fibKey]*route)
	}
	if a := pfx.Addr(); a.Is4In6() {
		pfx = netip.PrefixFrom(a.Unmap(), max(0, pfx.Bits()-96))
	}
	k := keyOf(pfx.Addr(), pfx.Bits())
	r := f.routes[k]
	if r == nil {
		r = &route{}
		f.routes[k] = r
		lens := &f.lens6
		if pfx.Addr().Is4() {
			lens = &f.lens4
		}
		if !slices.Contains(*lens, pfx.Bits()) {
			*lens = append(*lens, pfx.Bits())
			slices.Sort(*lens)
			slices.Reverse(*lens)
		}
	}
	for _, p := range ports {
		if !slices.Contains(r.ports, p) {
			r.ports = append(r.ports, p)
		}
	}
}

func (f *fib) lookup(a netip.Addr) *route {
	a = a.Unmap()
	lens := f.lens6
	if a.Is4() {
		lens = f.lens4
	}
	for _, l := range lens {
		if r := f.routes[keyOf(a, l)]; r != nil {
			return r
		}
	}
	return nil
}

// route picks p's egress port: longest-prefix match on the destination,
// then among equal-cost ports either spraying (per packet) or the flow hash.
func (s *Switch) route(p *wire.Packet) (int, bool) {
	if !p.DstIP.IsValid() {
		return 0, false
	}
	r := s.fib.lookup(p.DstIP)
	if r == nil {
		return 0, false
	}
	n := len(r.ports)
	if n == 1 {
		return r.ports[0], true
	}
	if s.spray[p.DSCP&63] {
		if s.cfg.ECMP.SprayRandom {
			return r.ports[s.rng.IntN(n)], true
		}
		i := r.rr
		r.rr = (r.rr + 1) % n
		return r.ports[i], true
	}
	hi, _ := bits.Mul64(s.flowHash(p), uint64(n))
	return r.ports[hi], true
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
