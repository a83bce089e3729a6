package endpoint

import (
	"fmt"
	"net/netip"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint/cc"
	"github.com/rocelab/rocelab/wire"
)

// path is one of a QP's flows: a UDP source port (so one ECMP path through
// the fabric), its pacing and congestion state and its loss state. A
// RoCEv2 QP has one path; a MetaRoCE QP sprays over cfg.Paths.
type path struct {
	idx  uint8
	port uint16
	gen  uint32
	cc   cc.Sender
	next clock.Time // pacing: earliest start of the next frame
	vfin clock.Time // weighted scheduling: virtual finish tag of the path's last frame

	seq         uint64    // last path sequence number given out
	hiDelivered uint64    // highest path sequence number known delivered
	fifo        []pathEnt // packets sent on the path, in order, not yet resolved
	head        int

	// Re-selection bookkeeping: path sequence numbers up to genBase were
	// sent on an earlier UDP source port, so they may arrive after later
	// ones; hiOld is the highest of them known delivered.
	genBase, hiOld uint64
	lastReselect   clock.Time

	epochSent, epochLost int
	sentPkts, lostPkts   int64
	reselections         int64
}

type pathEnt struct{ seq, pathSeq uint64 }

// Path re-selection: a path that loses at least 1/pathBadDiv of the
// packets of an epoch of pathEpoch packets (or loses one to a timeout) gets
// a new UDP source port.
const (
	pathEpoch  = 256
	pathBadDiv = 8
)

// setPaths builds n paths with their congestion controllers. With a
// receiver-driven algorithm (credit) all paths share one controller: the
// receiver paces the QP as a whole.
func (r *requester) setPaths(n int) error {
	qp := r.qp
	nic := qp.nic
	for _, pa := range r.paths {
		pa.cc.Close()
	}
	r.paths = r.paths[:0]
	var shared cc.Sender
	for i := range n {
		pa := &path{idx: uint8(i)}
		pa.port = qp.pathPort(i, 0)
		switch {
		case shared != nil:
			pa.cc = shared
		case nic.opts.CC == nil:
			pa.cc = lineRate{nic.opts.LineRate}
		default:
			alg, err := nic.opts.CC.Get(qp.cfg.CC)
			if err != nil {
				return err
			}
			s, err := alg.NewSender(cc.Env{Sched: nic.sched, LineRate: nic.opts.LineRate, MTU: qp.mtu, Params: nic.opts.CCParams})
			if err != nil {
				return fmt.Errorf("congestion control %s: %w", qp.cfg.CC, err)
			}
			pa.cc = s
			if qp.creditDriven() {
				shared = s
			}
		}
		r.paths = append(r.paths, pa)
	}
	r.dirty = make([]uint64, (n+63)/64)
	for i := range n {
		r.markDirty(i)
	}
	return nil
}

// markDirty notes that path i learnt of a delivery, so that the next
// detectLoss walks its FIFO.
func (r *requester) markDirty(i int) { r.dirty[i>>6] |= 1 << (i & 63) }

// creditDriven reports whether the QP's algorithm is the NIC's
// receiver-driven one.
func (qp *QP) creditDriven() bool {
	return qp.nic.opts.CC != nil && qp.cfg.CC == qp.nic.opts.CreditReceiver
}

// pathPort derives the UDP source port of path i, generation gen, from the
// QPN: a port in 0xC000–0xFFFF (the dynamic range).
func (qp *QP) pathPort(i int, gen uint32) uint16 {
	return pathPort(qp.qpn, qp.nic.opts.IP, i, gen)
}

// PathPort is the UDP source port of path i of the QP numbered qpn on the
// NIC whose address is ip, before any re-selection: the port its packets
// carry, hence their ECMP path (a flow-level simulator routes a QP's
// flow by it).
func PathPort(qpn uint32, ip netip.Addr, i int) uint16 { return pathPort(qpn, ip, i, 0) }

func pathPort(qpn uint32, ip netip.Addr, i int, gen uint32) uint16 {
	x := uint64(qpn)<<20 ^ uint64(i)<<8 ^ uint64(gen)<<40 ^ uint64(ip.As16()[15])<<56
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return 0xC000 | uint16(x)&0x3FFF
}

// lineRate is the controller of a NIC built without a registry: line rate,
// no window.
type lineRate struct{ r clock.Rate }

func (l lineRate) Rate() clock.Rate       { return l.r }
func (l lineRate) Allowance() int64       { return cc.Unlimited }
func (l lineRate) OnSend(int)             {}
func (l lineRate) OnFeedback(cc.Feedback) {}
func (l lineRate) Close()                 {}

// pickPath returns the path the next packet goes on, or -1 and the
// earliest time one may leave (clock.Never while only credit can open one).
// Among the paths whose pacing and allowance let a frame leave now it picks
// the one with the smallest start tag max(vfin, vnow) — start-time fair
// queueing with each path weighted by its controller's rate, so a path
// whose rate was cut gets a proportionally smaller share of the QP's
// frames at once, not only when its pacer binds. Ties go round-robin from
// the path after the last one picked. With equal rates (no CC, credit) it
// is plain round-robin.
func (r *requester) pickPath(now clock.Time) (int, clock.Time) {
	est := r.qp.mtu + 100
	earliest := clock.Never
	n := len(r.paths)
	best, bestTag := -1, clock.Never
	for k := range n {
		i := (r.rrPath + k) % n
		pa := r.paths[i]
		if pa.cc.Allowance() < int64(est) {
			continue
		}
		if pa.next > now {
			earliest = min(earliest, pa.next)
			continue
		}
		if tag := max(pa.vfin, r.vnow); tag < bestTag {
			best, bestTag = i, tag
			if tag == r.vnow {
				break // no tag is below vnow, and ties go to the first in round-robin order
			}
		}
	}
	if best < 0 {
		return -1, earliest
	}
	r.rrPath = best + 1
	r.vnow = bestTag
	return best, 0
}

// onSend accounts a frame of n bytes sent on the path now: pacing, the
// weighted-scheduling tag (from vnow, the start tag of this frame) and the
// controller.
func (pa *path) onSend(now, vnow clock.Time, n int) {
	d := pa.cc.Rate().Serialize(wire.OnWireBytes(n))
	pa.next = max(pa.next, now).Add(d)
	pa.vfin = max(pa.vfin, vnow).Add(d)
	pa.cc.OnSend(n)
	pa.sentPkts++
	pa.epochSent++
}

// track records that seq went out on the path and returns its path
// sequence number.
func (pa *path) track(seq uint64) uint64 {
	pa.seq++
	pa.fifo = append(pa.fifo, pathEnt{seq: seq, pathSeq: pa.seq})
	return pa.seq
}

// lossFeedback tells the controller about a loss on the path.
func (pa *path) lossFeedback() { pa.cc.OnFeedback(cc.Feedback{Kind: cc.Loss}) }

// lost counts a loss on the path and re-selects it when the epoch's loss
// rate is too high.
func (pa *path) lost(qp *QP) {
	pa.lostPkts++
	pa.epochLost++
	qp.ctr.lostPkts++
	pa.lossFeedback()
	if pa.epochSent >= pathEpoch {
		if pa.epochLost*pathBadDiv >= pa.epochSent {
			pa.reselect(qp, "loss")
		}
		pa.epochSent, pa.epochLost = 0, 0
	}
}

// reselect moves the path to a new UDP source port (a new ECMP path).
// Only multipath MetaRoCE QPs re-select: a RoCEv2 QP keeps its 5-tuple.
func (pa *path) reselect(qp *QP, why string) {
	if qp.mode != ModeMetaRoCE || len(qp.req.paths) < 2 {
		return
	}
	pa.gen++
	pa.port = qp.pathPort(int(pa.idx), pa.gen)
	pa.genBase, pa.hiOld = pa.seq, pa.hiDelivered
	pa.lastReselect = qp.nic.sched.Now()
	pa.reselections++
	pa.epochSent, pa.epochLost = 0, 0
	qp.ctr.reselections++
	_ = why
}

// delivered notes that the packet with path sequence number ps arrived.
func (pa *path) delivered(ps uint64) {
	if ps <= pa.genBase {
		pa.hiOld = max(pa.hiOld, ps)
		return
	}
	pa.hiDelivered = max(pa.hiDelivered, ps)
}

// lostBefore reports whether the unacknowledged packet with path sequence
// number ps is known lost: a packet sent after it on the same UDP source
// port arrived. Packets of an earlier port are judged only against each
// other (the new port's packets may overtake them).
func (pa *path) lostBefore(ps uint64) bool {
	if ps <= pa.genBase {
		return ps < pa.hiOld
	}
	return ps < pa.hiDelivered
}

// pathByPort returns the path using UDP source port port, or nil.
func (r *requester) pathByPort(port uint16) *path {
	for _, pa := range r.paths {
		if pa.port == port {
			return pa
		}
	}
	return nil
}
