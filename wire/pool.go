package wire

// PacketPool keeps descriptors that their last owner is done with, for
// whoever builds the next packet: a NIC takes one for each packet it
// sends and gives back each one it receives. It is a stack, so the
// descriptor handed out is the one given back last, most likely still in
// the CPU's cache; a simulation that shares one pool among the NICs that
// run on one engine reuses, for the next packet any of them sends, the
// descriptor another received a moment before (docs/performance.md).
//
// A PacketPool is not safe for concurrent use: share it only among users
// that run on one goroutine at a time (one engine, one node loop).
type PacketPool struct {
	free []*Packet
	max  int
}

// NewPacketPool returns an empty pool that keeps at most max descriptors
// (beyond that, Put leaves them to the garbage collector).
func NewPacketPool(max int) *PacketPool {
	return &PacketPool{max: max}
}

// Get returns the descriptor given back last, or nil when the pool is
// empty. Its fields are whatever they were: the caller overwrites them.
func (pp *PacketPool) Get() *Packet {
	k := len(pp.free)
	if k == 0 {
		return nil
	}
	p := pp.free[k-1]
	pp.free = pp.free[:k-1]
	return p
}

// Put gives p back; nothing may touch p afterwards. It reports whether
// the pool kept p (false when it holds max already).
func (pp *PacketPool) Put(p *Packet) bool {
	if len(pp.free) >= pp.max {
		return false
	}
	pp.free = append(pp.free, p)
	return true
}

// Len returns how many descriptors the pool holds.
func (pp *PacketPool) Len() int { return len(pp.free) }
