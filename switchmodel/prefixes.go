package switchmodel

import (
	"net/netip"
	"slices"
)

// Prefixes numbers prefixes: a switch keeps its routes in a slice indexed
// by these numbers, and a lookup finds a prefix's number in these maps.
// Given as Options.Prefixes, one numbering serves every switch of a
// fabric: in a data-center fabric every switch routes every destination
// prefix (a 1,024-host Clos: 264 switches × 5,384 prefixes), so per-switch
// maps would be copies of each other, 1.4 million entries built one hash at
// a time. A switch without Options.Prefixes numbers its own (the
// emulation's nodes, one switch a process).
//
// It is not safe for concurrent use: the switches that share it run on one
// scheduler (the simulator's).
type Prefixes struct {
	v4           map[uint64]int32
	v6           map[fibKey]int32
	lens4, lens6 []int // prefix lengths in use, longest first
	n            int32
}

// NewPrefixes returns an empty numbering with room for n4 IPv4 and n6
// IPv6 prefixes.
func NewPrefixes(n4, n6 int) *Prefixes {
	return &Prefixes{v4: make(map[uint64]int32, n4), v6: make(map[fibKey]int32, n6)}
}

// Len returns how many prefixes are numbered.
func (p *Prefixes) Len() int { return int(p.n) }

// number returns the number of pfx (masked, 4-in-6 unmapped), numbering it
// if it is new.
func (p *Prefixes) number(pfx netip.Prefix) int32 {
	a, bits := pfx.Addr(), pfx.Bits()
	if a.Is4() {
		return numberIn(p, p.v4, &p.lens4, key4(addr4(a), bits), bits)
	}
	return numberIn(p, p.v6, &p.lens6, key6(a, bits), bits)
}

// numberIn returns the number of the prefix k (bits long) in m, one
// family's map of p, numbering it next and adding bits to that family's
// lengths if it is new.
func numberIn[K comparable](p *Prefixes, m map[K]int32, lens *[]int, k K, bits int) int32 {
	i, ok := m[k]
	if !ok {
		i = p.n
		m[k] = i
		p.n++
		*lens = addLen(*lens, bits)
	}
	return i
}

// addLen adds bits to the lengths in use, kept longest first.
func addLen(lens []int, bits int) []int {
	if slices.Contains(lens, bits) {
		return lens
	}
	lens = append(lens, bits)
	slices.Sort(lens)
	slices.Reverse(lens)
	return lens
}
