package switchmodel

// mmu is the switch-wide shared buffer. The buffer is split, once, into the
// reserved pool (Reserved bytes for every port and PG), the headroom pool
// (the headroom of every lossless PG) and the shared pool, what is left.
// Priority groups draw from their reserve first, then from the shared pool
// up to the threshold, then (lossless PGs) from their headroom.
type mmu struct {
	size       int64 // whole buffer
	shared     int64 // shared pool size S
	reserve    int64 // per (port, PG)
	alpha      float64
	static     int64 // static threshold when alpha is 0
	sharedUsed int64 // bytes in the shared pool
	hdrmUsed   int64 // bytes in headroom, all PGs
	used       int64 // bytes in the buffer
	peak       int64
}

// pg is the ingress accounting of one (port, priority group): bytes that
// entered through this port with this priority and are still in the
// buffer, wherever they queue for egress. It is one cache line, what
// admitting and releasing a packet touch (see Port); the times and counts
// of its pauses live apart (classCtl).
type pg struct {
	used int64 // reserved + shared bytes
	hdrm int64 // headroom bytes

	rxPkts, rxBytes      int64
	peakUsed, peakShared int64
	peakHd               int64

	headroom int32 // headroom capacity; 0 for a lossy PG
	lossless bool
	// PFC toward the upstream: xoff is set while the upstream is told to
	// pause; signal asks the port's transmitter to send this PG's state.
	xoff   bool
	signal bool
}

// sharedOf returns the shared-pool part of a PG's use.
func (m *mmu) sharedOf(g *pg) int64 {
	if g.used > m.reserve {
		return g.used - m.reserve
	}
	return 0
}

// threshold returns how much of the shared pool one PG may hold once extra
// more bytes are in the shared pool: α × free shared buffer (dynamic), or
// the static threshold.
func (m *mmu) threshold(extra int64) int64 {
	if m.alpha == 0 {
		return m.static
	}
	free := m.shared - m.sharedUsed - extra
	if free <= 0 {
		return 0
	}
	return int64(m.alpha * float64(free))
}

// where records which pool admitted a packet.
type where uint8

const (
	refused where = iota
	inReserve
	inShared
	inHeadroom
)

// admit decides whether n more bytes may enter through g: reserve first;
// then the shared pool, if the PG's shared use after admission stays within
// α × the free shared buffer after admission (so a lone PG never holds more
// than α/(1+α) of the shared pool); then headroom for a lossless PG.
func (m *mmu) admit(g *pg, n int64) where {
	nu := g.used + n
	if nu <= m.reserve {
		return inReserve
	}
	ns := nu - m.reserve
	delta := min(n, ns)
	if m.sharedUsed+delta <= m.shared && ns <= m.threshold(delta) {
		return inShared
	}
	if g.lossless && g.hdrm+n <= int64(g.headroom) {
		return inHeadroom
	}
	return refused
}

// charge accounts n bytes admitted into w.
func (m *mmu) charge(g *pg, n int64, w where) {
	switch w {
	case inReserve:
		g.used += n
	case inShared:
		m.sharedUsed += min(n, g.used+n-m.reserve)
		g.used += n
	case inHeadroom:
		g.hdrm += n
		m.hdrmUsed += n
		g.peakHd = max(g.peakHd, g.hdrm)
	}
	g.peakUsed = max(g.peakUsed, g.used)
	g.peakShared = max(g.peakShared, m.sharedOf(g))
	m.used += n
	m.peak = max(m.peak, m.used)
}

// release frees n bytes of g as a packet leaves the buffer: headroom first,
// then shared, then reserve.
func (m *mmu) release(g *pg, n int64) {
	fromHd := min(g.hdrm, n)
	g.hdrm -= fromHd
	m.hdrmUsed -= fromHd
	rest := n - fromHd
	fromShared := min(rest, m.sharedOf(g))
	m.sharedUsed -= fromShared
	g.used -= rest
	m.used -= n
}
