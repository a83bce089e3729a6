// Package stats turns node telemetry into the tables of `rocelab stats`:
// per switch port, per switch queue, per NIC and per QP, with rates
// computed from two snapshots.
//
// Rates are in real (fabric) units: Δbytes over Δfabric time, the node's
// emu_fabric_seconds_total sample, which runs k times slower than the wall
// clock at scale k. With one snapshot, rates are averages since
// the node started.
package stats

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/core/telemetry"
)

// Snapshot is one node's telemetry at one moment.
type Snapshot struct {
	Node    string
	Samples []telemetry.Sample
}

// FabricTime is the snapshot's fabric time in seconds (0 if unknown).
func (s Snapshot) FabricTime() float64 {
	return telemetry.Sum(s.Samples, "emu_fabric_seconds_total")
}

// The rows' JSON names a counter or gauge by its telemetry sample, the
// name /metrics exports with rocelab_ before it (a test holds the two to
// one vocabulary); a map is the sample by one of its labels. Rates are
// derived: bits per second of fabric time from a byte counter.

// Port is one switch port.
type Port struct {
	Node   string `json:"node"`
	Port   string `json:"port"`
	IfName string `json:"ifname,omitempty"`
	// RxBps and TxBps are bits per second of fabric time.
	RxBps float64 `json:"rx_bits_per_second"`
	TxBps float64 `json:"tx_bits_per_second"`
	// Depth is the bytes queued on the port's egress queues now; Peak the
	// largest queue peak.
	Depth float64 `json:"switch_queue_depth_bytes"`
	Peak  float64 `json:"switch_queue_peak_bytes"`
	ECN   float64 `json:"switch_queue_ecn_marked_packets_total"`
	// PFCTx and PFCRx are PFC frames sent and received.
	PFCTx float64 `json:"switch_port_pfc_tx_frames_total"`
	PFCRx float64 `json:"switch_port_pfc_rx_frames_total"`
	// Paused is the egress queues' paused time (fabric seconds).
	Paused float64 `json:"switch_queue_paused_seconds_total"`
	// Drops are the switch's drops on the port by reason; FaultPackets
	// what live faults on the port's egress did, by event (only
	// "dropped" is kept: a fault drops before the wire).
	Drops        map[string]float64 `json:"switch_drop_packets_total,omitempty"`
	FaultPackets map[string]float64 `json:"fault_packets_total,omitempty"`
}

// DropsTotal is every packet the port lost: the switch's drops and its
// faults'.
func (p Port) DropsTotal() float64 {
	var n float64
	for _, v := range p.Drops {
		n += v
	}
	return n + p.FaultPackets["dropped"]
}

// Queue is one egress queue (port, traffic class) that saw traffic.
type Queue struct {
	Node   string  `json:"node"`
	Port   string  `json:"port"`
	TC     string  `json:"tc"`
	TxBps  float64 `json:"tx_bits_per_second"`
	Depth  float64 `json:"switch_queue_depth_bytes"`
	Peak   float64 `json:"switch_queue_peak_bytes"`
	ECN    float64 `json:"switch_queue_ecn_marked_packets_total"`
	PFCRx  float64 `json:"switch_queue_pfc_rx_frames_total"`
	Paused float64 `json:"switch_queue_paused_seconds_total"`
	// PFCTx are the XOFF frames the port's ingress priority group of the
	// same class sent upstream.
	PFCTx float64 `json:"switch_pg_pfc_xoff_frames_total"`
	// Drops by reason.
	Drops map[string]float64 `json:"switch_drop_packets_total,omitempty"`
}

// NIC is one endpoint NIC (nic_* samples).
type NIC struct {
	Node    string  `json:"node"`
	TxBps   float64 `json:"tx_bits_per_second"`
	RxBps   float64 `json:"rx_bits_per_second"`
	CNPs    float64 `json:"nic_cnp_rx_total"`
	PFCRx   float64 `json:"nic_pfc_rx_frames_total"`
	Paused  float64 `json:"nic_paused_seconds_total"`
	BadICRC float64 `json:"nic_rx_bad_icrc_total"`
}

// QP is one queue pair (qp_* samples).
type QP struct {
	Node        string  `json:"node"`
	QP          string  `json:"qp"`
	TxBps       float64 `json:"tx_bits_per_second"`
	RxBps       float64 `json:"rx_bits_per_second"`
	Retransmits float64 `json:"qp_retransmits_total"`
	CNPsTx      float64 `json:"qp_cnp_tx_total"`
	CNPsRx      float64 `json:"qp_cnp_rx_total"`
}

// Report is what Compute returns.
type Report struct {
	// Interval is the fabric time between the snapshots (seconds).
	Interval float64 `json:"interval_seconds"`
	Ports    []Port  `json:"ports"`
	Queues   []Queue `json:"queues"`
	NICs     []NIC   `json:"nics,omitempty"`
	QPs      []QP    `json:"qps,omitempty"`
	// Dead are the nodes that did not answer (Collect), not in the rows.
	Dead []Dead `json:"dead,omitempty"`
	// Behind are the nodes whose loop is behind the lab's dilated clock
	// now (emu_behind): their rates are not the fabric's.
	Behind []string `json:"behind,omitempty"`
}

// index maps a sample's name and labels to its value.
type index map[string]float64

func newIndex(s []telemetry.Sample) index {
	ix := make(index, len(s))
	for _, x := range s {
		ix[x.String()] += x.Value
	}
	return ix
}

// rate returns the bits per second of the byte counter cur over dt,
// against prev (absent: 0).
func rate(prev index, cur telemetry.Sample, dt float64) float64 {
	if dt <= 0 {
		return 0
	}
	return 8 * max(0, cur.Value-prev[cur.String()]) / dt
}

// Compute builds the report of cur against prev (prev with no samples:
// averages since the node started). Both must be of the same node.
func Compute(prev, cur Snapshot) Report {
	dt := cur.FabricTime() - prev.FabricTime()
	pix := newIndex(prev.Samples)
	r := Report{Interval: dt}
	ports := map[string]*Port{}
	queues := map[string]*Queue{}
	nics := map[string]*NIC{}
	qps := map[string]*QP{}
	ifnames := map[string]string{}
	portRow := func(node, port string) *Port {
		return row(ports, node+"\x00"+port, func() *Port { return &Port{Node: node, Port: port} })
	}
	port := func(s telemetry.Sample) *Port { return portRow(s.Label("node"), s.Label("port")) }
	queue := func(s telemetry.Sample, tc string) *Queue {
		node, port := s.Label("node"), s.Label("port")
		return row(queues, node+"\x00"+port+"\x00"+tc, func() *Queue { return &Queue{Node: node, Port: port, TC: tc} })
	}
	for _, s := range cur.Samples {
		switch s.Name {
		case "emu_behind":
			if s.Value > 0 && !slices.Contains(r.Behind, s.Label("node")) {
				r.Behind = append(r.Behind, s.Label("node"))
			}
		case "emu_rx_frames_total":
			ifnames[s.Label("node")+"\x00"+s.Label("port")] = s.Label("ifname")
		case "switch_port_rx_bytes_total":
			port(s).RxBps = rate(pix, s, dt)
		case "switch_port_tx_bytes_total":
			port(s).TxBps = rate(pix, s, dt)
		case "switch_port_pfc_tx_frames_total":
			port(s).PFCTx = s.Value
		case "switch_port_pfc_rx_frames_total":
			port(s).PFCRx = s.Value
		case "switch_queue_tx_bytes_total":
			queue(s, s.Label("tc")).TxBps = rate(pix, s, dt)
		case "switch_queue_depth_bytes":
			queue(s, s.Label("tc")).Depth = s.Value
			port(s).Depth += s.Value
		case "switch_queue_peak_bytes":
			queue(s, s.Label("tc")).Peak = s.Value
			p := port(s)
			p.Peak = max(p.Peak, s.Value)
		case "switch_queue_ecn_marked_packets_total":
			queue(s, s.Label("tc")).ECN = s.Value
			port(s).ECN += s.Value
		case "switch_queue_pfc_rx_frames_total":
			queue(s, s.Label("tc")).PFCRx = s.Value
		case "switch_queue_paused_seconds_total":
			queue(s, s.Label("tc")).Paused = s.Value
			port(s).Paused += s.Value
		case "switch_pg_pfc_xoff_frames_total":
			queue(s, s.Label("pg")).PFCTx = s.Value
		case "switch_drop_packets_total":
			addTo(&queue(s, s.Label("tc")).Drops, s.Label("reason"), s.Value)
			addTo(&port(s).Drops, s.Label("reason"), s.Value)
		case "fault_packets_total":
			// Faults on a switch port's egress (target node:pN) drop
			// before the wire: count them with the port's drops.
			if s.Label("event") != "dropped" || s.Value == 0 {
				continue
			}
			nd, pn, _ := strings.Cut(s.Label("target"), ":")
			if i, err := strconv.Atoi(strings.TrimPrefix(pn, "p")); err == nil && strings.HasPrefix(pn, "p") && i >= 1 && nd == s.Label("node") {
				addTo(&portRow(nd, strconv.Itoa(i-1)).FaultPackets, "dropped", s.Value)
			}
		case "nic_tx_bytes_total", "nic_rx_bytes_total", "nic_cnp_rx_total", "nic_pfc_rx_frames_total", "nic_paused_seconds_total", "nic_rx_bad_icrc_total":
			node := s.Label("node")
			n := row(nics, node, func() *NIC { return &NIC{Node: node} })
			switch s.Name {
			case "nic_tx_bytes_total":
				n.TxBps = rate(pix, s, dt)
			case "nic_rx_bytes_total":
				n.RxBps = rate(pix, s, dt)
			case "nic_cnp_rx_total":
				n.CNPs = s.Value
			case "nic_pfc_rx_frames_total":
				n.PFCRx += s.Value
			case "nic_paused_seconds_total":
				n.Paused += s.Value
			case "nic_rx_bad_icrc_total":
				n.BadICRC = s.Value
			}
		case "qp_tx_bytes_total", "qp_rx_bytes_total", "qp_retransmits_total", "qp_cnp_tx_total", "qp_cnp_rx_total":
			node, qp := s.Label("node"), s.Label("qp")
			q := row(qps, node+"\x00"+qp, func() *QP { return &QP{Node: node, QP: qp} })
			switch s.Name {
			case "qp_tx_bytes_total":
				q.TxBps = rate(pix, s, dt)
			case "qp_rx_bytes_total":
				q.RxBps = rate(pix, s, dt)
			case "qp_retransmits_total":
				q.Retransmits = s.Value
			case "qp_cnp_tx_total":
				q.CNPsTx = s.Value
			case "qp_cnp_rx_total":
				q.CNPsRx = s.Value
			}
		}
	}
	for k, p := range ports {
		p.IfName = ifnames[k]
		r.Ports = append(r.Ports, *p)
	}
	for _, q := range queues {
		if q.TxBps > 0 || q.Depth > 0 || q.Peak > 0 || q.ECN > 0 || q.PFCRx > 0 || q.PFCTx > 0 || q.Paused > 0 || len(q.Drops) > 0 {
			r.Queues = append(r.Queues, *q)
		}
	}
	for _, n := range nics {
		r.NICs = append(r.NICs, *n)
	}
	for _, q := range qps {
		r.QPs = append(r.QPs, *q)
	}
	num := func(a, b string) int {
		x, ex := strconv.Atoi(a)
		y, ey := strconv.Atoi(b)
		if ex == nil && ey == nil {
			return cmp.Compare(x, y)
		}
		return cmp.Compare(a, b)
	}
	slices.SortFunc(r.Ports, func(a, b Port) int { return cmp.Or(cmp.Compare(a.Node, b.Node), num(a.Port, b.Port)) })
	slices.SortFunc(r.Queues, func(a, b Queue) int {
		return cmp.Or(cmp.Compare(a.Node, b.Node), num(a.Port, b.Port), num(a.TC, b.TC))
	})
	slices.SortFunc(r.NICs, func(a, b NIC) int { return cmp.Compare(a.Node, b.Node) })
	slices.SortFunc(r.QPs, func(a, b QP) int { return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.QP, b.QP)) })
	for i := range r.Ports {
		r.Ports[i].Port = PortName(r.Ports[i].Port)
	}
	for i := range r.Queues {
		r.Queues[i].Port = PortName(r.Queues[i].Port)
	}
	return r
}

// row returns rows[key], made by mk first when there is none.
func row[T any](rows map[string]*T, key string, mk func() *T) *T {
	r := rows[key]
	if r == nil {
		r = mk()
		rows[key] = r
	}
	return r
}

// addTo adds v to (*m)[key], making the map first when it is nil.
func addTo(m *map[string]float64, key string, v float64) {
	if *m == nil {
		*m = map[string]float64{}
	}
	(*m)[key] += v
}

// PortName is the name every command uses for the port whose telemetry
// label is the 0-based index label: p1 for "0", p8 for "7" (the topology's
// default port names). Any other label is returned as it is.
func PortName(label string) string {
	if i, err := strconv.Atoi(label); err == nil && i >= 0 {
		return "p" + strconv.Itoa(i+1)
	}
	return label
}

// Merge appends the rows of more to r (reports of several nodes).
func (r *Report) Merge(more Report) {
	r.Ports = append(r.Ports, more.Ports...)
	r.Queues = append(r.Queues, more.Queues...)
	r.NICs = append(r.NICs, more.NICs...)
	r.QPs = append(r.QPs, more.QPs...)
	r.Dead = append(r.Dead, more.Dead...)
	r.Behind = append(r.Behind, more.Behind...)
	r.Interval = max(r.Interval, more.Interval)
}
