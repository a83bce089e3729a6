package switchmodel

import (
	"strconv"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
)

var _ telemetry.Source = (*Switch)(nil)

var tcLabels = [NumTC]string{"0", "1", "2", "3", "4", "5", "6", "7"}

// QueueStats is a snapshot of one egress queue.
type QueueStats struct {
	DepthBytes, DepthPackets int64
	PeakBytes, PeakPackets   int64
	EnqueuedPackets          int64
	TxPackets, TxBytes       int64
	ECNMarked, Trimmed       int64
	PFCRx, PFCIgnored        int64
	Paused                   bool
	PausedTime               clock.Duration // total, the ongoing pause included
	WatchdogEvents           int64
	WatchdogRestores         int64
}

// PGStats is a snapshot of one ingress priority group.
type PGStats struct {
	RxPackets, RxBytes      int64
	Used, Shared, Headroom  int64 // bytes now: reserve+shared, shared part, headroom
	PeakUsed, PeakShared    int64
	PeakHeadroom            int64
	HeadroomSize            int64
	XOff                    bool // upstream told to pause now
	XOffFrames, XOnFrames   int64
	XOffTime                clock.Duration // total upstream pause time, ongoing included
	DropPackets, DropBytes  int64          // ingress-side drops of this PG, all reasons
	RefusedNoHeadroom       int64
	RefusedIngressAdmission int64
}

// PortStats is a snapshot of a port's totals.
type PortStats struct {
	RxPackets, RxBytes int64
	TxPackets, TxBytes int64 // PFC frames included
	PFCRx, PFCTx       int64
	// Replies are the control plane's answers to packets that came in on
	// the port (ARP, neighbour advertisements, ICMP echo replies).
	Replies int64
	Drops   map[string]int64 // packets by reason, all classes
}

// txPackets returns the frames the port has transmitted: its queues'
// and its PFC frames (kept apart so that a transmission does not touch
// another cache line; see Port).
func (pt *Port) txPackets() int64 {
	n := pt.pfcTx
	for i := range pt.q {
		n += pt.q[i].txPkts
	}
	return n
}

// Bytes returns the bytes the port has received and transmitted.
func (pt *Port) Bytes() (rx, tx int64) { return pt.rxBytes, pt.txBytes }

// Queue returns a snapshot of egress queue tc.
func (pt *Port) Queue(tc int) QueueStats {
	q, c := &pt.q[tc], pt.ctlView(tc)
	st := QueueStats{
		DepthBytes: q.bytes, DepthPackets: int64(q.n),
		PeakBytes: q.peakBytes, PeakPackets: int64(q.peakPkts),
		EnqueuedPackets: q.enqPkts,
		TxPackets:       q.txPkts, TxBytes: q.txBytes,
		ECNMarked: q.ecnMarks, Trimmed: c.trims,
		PFCRx: c.pfcRx, PFCIgnored: c.pfcIgnored,
		Paused: q.paused, PausedTime: c.pausedTotal,
		WatchdogEvents: c.wdEvents, WatchdogRestores: c.wdRestores,
	}
	if q.paused {
		st.PausedTime += pt.sw.sched.Now().Sub(c.pausedSince)
	}
	return st
}

// PG returns a snapshot of ingress priority group i.
func (pt *Port) PG(i int) PGStats {
	g, c := &pt.pg[i], pt.ctlView(i)
	m := &pt.sw.mmu
	st := PGStats{
		RxPackets: g.rxPkts, RxBytes: g.rxBytes,
		Used: g.used, Shared: m.sharedOf(g), Headroom: g.hdrm,
		PeakUsed: g.peakUsed, PeakShared: g.peakShared, PeakHeadroom: g.peakHd,
		HeadroomSize: int64(g.headroom),
		XOff:         g.xoff, XOffFrames: c.xoffFrames, XOnFrames: c.xonFrames,
		XOffTime:                c.xoffTotal,
		RefusedNoHeadroom:       pt.dropped(i, dropNoHeadroom).pkts,
		RefusedIngressAdmission: pt.dropped(i, dropIngress).pkts,
	}
	if g.xoff {
		st.XOffTime += pt.sw.sched.Now().Sub(c.xoffSince)
	}
	for r := dropReason(0); r < dropEgressLimit; r++ {
		d := pt.dropped(i, r)
		st.DropPackets += d.pkts
		st.DropBytes += d.bytes
	}
	return st
}

// Stats returns a snapshot of the port's totals.
func (pt *Port) Stats() PortStats {
	st := PortStats{
		RxPackets: pt.rxPkts, RxBytes: pt.rxBytes,
		TxPackets: pt.txPackets(), TxBytes: pt.txBytes,
		PFCRx: pt.pfcRx, PFCTx: pt.pfcTx,
		Replies: pt.replies,
		Drops:   map[string]int64{},
	}
	for tc := range NumTC {
		for r := range numReasons {
			if d := pt.dropped(tc, dropReason(r)); d.pkts > 0 {
				st.Drops[reasonNames[r]] += d.pkts
			}
		}
	}
	return st
}

// Drops returns the packets the switch dropped for reason (a label value
// of switch_drop_packets_total, e.g. "no_headroom"), all ports and classes.
func (s *Switch) Drops(reason string) int64 {
	var n int64
	for _, pt := range s.ports {
		for tc := range NumTC {
			for r := range numReasons {
				if d := pt.dropped(tc, dropReason(r)); reasonNames[r] == reason {
					n += d.pkts
				}
			}
		}
	}
	return n
}

// Collect emits the switch's counters and gauges, labelled node, port and
// tc (egress queues, drops) or pg (ingress priority groups). Drop counters
// are emitted only for the (port, class, reason) triples that dropped.
func (s *Switch) Collect(emit func(telemetry.Sample)) {
	node := []telemetry.Label{{Name: "node", Value: s.name}}
	g := func(name string, v float64, l []telemetry.Label) {
		emit(telemetry.Sample{Name: name, Kind: telemetry.Gauge, Labels: l, Value: v})
	}
	c := func(name string, v float64, l []telemetry.Label) {
		emit(telemetry.Sample{Name: name, Kind: telemetry.Counter, Labels: l, Value: v})
	}
	m := &s.mmu
	g("switch_buffer_size_bytes", float64(m.size), node)
	g("switch_buffer_shared_pool_bytes", float64(m.shared), node)
	g("switch_buffer_used_bytes", float64(m.used), node)
	g("switch_buffer_peak_bytes", float64(m.peak), node)
	g("switch_buffer_shared_used_bytes", float64(m.sharedUsed), node)
	g("switch_buffer_headroom_used_bytes", float64(m.hdrmUsed), node)
	g("switch_buffer_threshold_bytes", float64(m.threshold(0)), node)
	for _, pt := range s.ports {
		pl := telemetry.With(node, telemetry.Label{Name: "port", Value: pt.label})
		c("switch_port_rx_packets_total", float64(pt.rxPkts), pl)
		c("switch_port_rx_bytes_total", float64(pt.rxBytes), pl)
		c("switch_port_tx_packets_total", float64(pt.txPackets()), pl)
		c("switch_port_tx_bytes_total", float64(pt.txBytes), pl)
		c("switch_port_pfc_rx_frames_total", float64(pt.pfcRx), pl)
		c("switch_port_pfc_tx_frames_total", float64(pt.pfcTx), pl)
		c("switch_port_control_replies_total", float64(pt.replies), pl)
		for i := range NumTC {
			ql := telemetry.With(pl, telemetry.Label{Name: "tc", Value: tcLabels[i]})
			q := pt.Queue(i)
			c("switch_queue_enqueued_packets_total", float64(q.EnqueuedPackets), ql)
			c("switch_queue_tx_packets_total", float64(q.TxPackets), ql)
			c("switch_queue_tx_bytes_total", float64(q.TxBytes), ql)
			g("switch_queue_depth_bytes", float64(q.DepthBytes), ql)
			g("switch_queue_depth_packets", float64(q.DepthPackets), ql)
			g("switch_queue_peak_bytes", float64(q.PeakBytes), ql)
			g("switch_queue_peak_packets", float64(q.PeakPackets), ql)
			c("switch_queue_ecn_marked_packets_total", float64(q.ECNMarked), ql)
			c("switch_queue_trimmed_packets_total", float64(q.Trimmed), ql)
			c("switch_queue_pfc_rx_frames_total", float64(q.PFCRx), ql)
			c("switch_queue_pfc_ignored_frames_total", float64(q.PFCIgnored), ql)
			g("switch_queue_paused", b2f(q.Paused), ql)
			c("switch_queue_paused_seconds_total", q.PausedTime.Seconds(), ql)
			c("switch_queue_watchdog_events_total", float64(q.WatchdogEvents), ql)
			c("switch_queue_watchdog_restores_total", float64(q.WatchdogRestores), ql)

			gl := telemetry.With(pl, telemetry.Label{Name: "pg", Value: tcLabels[i]})
			p := pt.PG(i)
			c("switch_pg_rx_packets_total", float64(p.RxPackets), gl)
			c("switch_pg_rx_bytes_total", float64(p.RxBytes), gl)
			g("switch_pg_used_bytes", float64(p.Used), gl)
			g("switch_pg_shared_bytes", float64(p.Shared), gl)
			g("switch_pg_headroom_bytes", float64(p.Headroom), gl)
			g("switch_pg_peak_bytes", float64(p.PeakUsed), gl)
			g("switch_pg_shared_peak_bytes", float64(p.PeakShared), gl)
			g("switch_pg_headroom_peak_bytes", float64(p.PeakHeadroom), gl)
			g("switch_pg_xoff", b2f(p.XOff), gl)
			c("switch_pg_pfc_xoff_frames_total", float64(p.XOffFrames), gl)
			c("switch_pg_pfc_xon_frames_total", float64(p.XOnFrames), gl)
			c("switch_pg_xoff_seconds_total", p.XOffTime.Seconds(), gl)

			for r := range numReasons {
				d := pt.dropped(i, dropReason(r))
				if d.pkts == 0 {
					continue
				}
				dl := telemetry.With(ql, telemetry.Label{Name: "reason", Value: reasonNames[r]})
				c("switch_drop_packets_total", float64(d.pkts), dl)
				c("switch_drop_bytes_total", float64(d.bytes), dl)
			}
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// String names the port as node/port for messages.
func (pt *Port) String() string { return pt.sw.name + "/" + strconv.Itoa(pt.idx) }

// ClassState is what a sampler of a large fabric reads of one class of a
// port at every reading (Port.Class): the depth of its egress queue and
// the pause times of QueueStats and PGStats, without building either
// snapshot.
type ClassState struct {
	DepthBytes int64
	// PausedTime is the time the egress queue was paused by its peer,
	// XOffTime the time the PG held its upstream in XOFF; both in total,
	// an ongoing pause included.
	PausedTime, XOffTime clock.Duration
}

// Class returns class tc's ClassState.
func (pt *Port) Class(tc int) ClassState {
	st := ClassState{DepthBytes: pt.q[tc].bytes}
	if pt.ctls == nil { // never paused either way (Port.ctl)
		return st
	}
	c := &pt.ctls[tc]
	st.PausedTime, st.XOffTime = c.pausedTotal, c.xoffTotal
	if pt.q[tc].paused {
		st.PausedTime += pt.sw.sched.Now().Sub(c.pausedSince)
	}
	if pt.pg[tc].xoff {
		st.XOffTime += pt.sw.sched.Now().Sub(c.xoffSince)
	}
	return st
}
