package web

import (
	"sort"
	"strings"
	"time"

	"github.com/rocelab/rocelab/dashboards/metrics"
	"github.com/rocelab/rocelab/topologies/graph"
)

// Frame is what the page draws at one instant: every link direction's
// utilisation and PFC state, every switch port's queue depth, QP and
// collective rates, the live faults and the nodes' health. Rates are in
// real (fabric) units: Δbytes over Δfabric time of the node that counted.
type Frame struct {
	Wall       time.Time         `json:"wall"`
	FabricTime float64           `json:"fabric_time_s"`
	Links      []LinkState       `json:"links"`
	Queues     map[string]int    `json:"queues"` // "node:port" → bytes queued (all classes)
	Nodes      map[string]string `json:"nodes"`  // name → "up", "behind" (up, but its loop is behind the dilated clock) or the error
	QPs        []Rate            `json:"qps"`
	Collective []Rate            `json:"collectives"`
	Faults     []metrics.Fault   `json:"faults"`
}

// LinkState is one link as two directions: AB is A's egress towards B.
// Frames list the layout's links in its order; fields that are zero are
// left out of the JSON (an idle link of a replay is "{}", and a replay's
// states carry no names: the page takes them from the layout).
type LinkState struct {
	A      string  `json:"a,omitempty"`
	APort  string  `json:"a_port,omitempty"`
	B      string  `json:"b,omitempty"`
	BPort  string  `json:"b_port,omitempty"`
	UtilAB float64 `json:"util_ab,omitempty"` // 0..1 of the line rate
	UtilBA float64 `json:"util_ba,omitempty"`
	// PFCAB is true when pauses held A's egress towards B during the last
	// interval (B asked A to stop).
	PFCAB bool `json:"pfc_ab,omitempty"`
	PFCBA bool `json:"pfc_ba,omitempty"`
}

// Rate is a named rate, bytes per fabric second.
type Rate struct {
	Name string  `json:"name"`
	Bps  float64 `json:"bytes_per_second"`
}

// snapshot indexes one reading's exported metrics for the frame builder.
type snapshot struct {
	wall   time.Time
	fabric map[string]float64 // node → fabric seconds
	vals   map[string]float64 // name{labels} → value
	r      metrics.Reading
}

func key(name string, labels ...string) string { return name + "{" + strings.Join(labels, ",") + "}" }

func newSnapshot(r metrics.Reading, wall time.Time) *snapshot {
	s := &snapshot{wall: wall, fabric: map[string]float64{}, vals: map[string]float64{}, r: r}
	for _, m := range metrics.Convert(r) {
		// Index without the lab label; sum over the rest when asked.
		s.vals[key(m.Name(), m.Labels[1:]...)] = m.Value
		s.sumInto(m)
	}
	for _, n := range r.Nodes {
		s.fabric[n.Name] = n.FabricTime
	}
	return s
}

// sumInto keeps per-port sums over traffic classes and priorities, the
// granularity the picture uses.
func (s *snapshot) sumInto(m metrics.Metric) {
	l := m.Labels[1:]
	switch m.Name() {
	case "rocelab_switch_queue_depth_bytes":
		s.vals[key("depth", l[0], l[1])] += m.Value
	case "rocelab_switch_queue_paused_seconds_total", "rocelab_nic_paused_seconds_total":
		s.vals[key("pfc_rx", l[0], l[1])] += m.Value
	case "rocelab_switch_pg_xoff_seconds_total":
		s.vals[key("pfc_tx", l[0], l[1])] += m.Value
	case "rocelab_switch_queue_paused":
		s.vals[key("pfc_now_rx", l[0], l[1])] += m.Value
	case "rocelab_switch_pg_xoff":
		s.vals[key("pfc_now_tx", l[0], l[1])] += m.Value
	case "rocelab_qp_tx_bytes_total":
		s.vals[key("qp", l[0], l[1], l[2])] += m.Value
	}
}

// txBytes returns the bytes a node's port has sent: a switch port's
// counter, or a NIC's.
func (s *snapshot) txBytes(node, port string) (float64, bool) {
	if v, ok := s.vals[key("rocelab_switch_port_tx_bytes_total", node, port)]; ok {
		return v, true
	}
	v, ok := s.vals[key("rocelab_nic_tx_bytes_total", node, port)]
	return v, ok
}

// buildFrame compares two snapshots of the same lab (prev may be nil).
func buildFrame(g graph.Layout, prev, cur *snapshot) Frame {
	f := Frame{Wall: cur.wall, Queues: map[string]int{}, Nodes: map[string]string{}}
	for _, n := range cur.r.Nodes {
		f.FabricTime = max(f.FabricTime, n.FabricTime)
		switch {
		case n.Up && cur.vals[key("rocelab_emu_behind", n.Name)] > 0:
			f.Nodes[n.Name] = "behind"
		case n.Up:
			f.Nodes[n.Name] = "up"
		default:
			f.Nodes[n.Name] = n.Err
		}
		f.Faults = append(f.Faults, n.Faults...)
		for _, p := range n.Ports {
			if d, ok := cur.vals[key("depth", n.Name, p.Name)]; ok {
				f.Queues[n.Name+":"+p.Name] = int(d)
			}
		}
	}
	speed := func(node, port string) float64 {
		return cur.vals[key("rocelab_port_speed_bytes_per_second", node, port)]
	}
	dt := func(node string) float64 {
		if prev == nil {
			return 0
		}
		return cur.fabric[node] - prev.fabric[node]
	}
	util := func(node, port string) float64 {
		d, sp := dt(node), speed(node, port)
		if d <= 0 || sp <= 0 {
			return 0
		}
		a, ok1 := cur.txBytes(node, port)
		b, ok2 := prev.txBytes(node, port)
		if !ok1 || !ok2 {
			return 0
		}
		return min(max((a-b)/d/sp, 0), 1)
	}
	// paused reports whether pauses held node:port's egress (rx pauses at
	// node) or node:port's ingress held its upstream (tx) in the interval.
	paused := func(node, port, dir string) bool {
		if cur.vals[key("pfc_now_"+dir, node, port)] > 0 {
			return true
		}
		return prev != nil && cur.vals[key("pfc_"+dir, node, port)] > prev.vals[key("pfc_"+dir, node, port)]
	}
	for _, l := range g.Links {
		ls := LinkState{A: l.A, APort: l.APort, B: l.B, BPort: l.BPort,
			UtilAB: util(l.A, l.APort), UtilBA: util(l.B, l.BPort),
			PFCAB: paused(l.A, l.APort, "rx") || paused(l.B, l.BPort, "tx"),
			PFCBA: paused(l.B, l.BPort, "rx") || paused(l.A, l.APort, "tx"),
		}
		f.Links = append(f.Links, ls)
	}
	if prev != nil {
		for k, v := range cur.vals {
			if !strings.HasPrefix(k, "qp{") {
				continue
			}
			parts := strings.Split(strings.TrimSuffix(strings.TrimPrefix(k, "qp{"), "}"), ",")
			if parts[2] == "retired" { // the sum of closed QPs, not a QP
				continue
			}
			if d := dt(parts[0]); d > 0 {
				f.QPs = append(f.QPs, Rate{Name: parts[0] + ":" + parts[1] + "/" + parts[2], Bps: max(v-prev.vals[k], 0) / d})
			}
		}
		for k, v := range cur.vals {
			name, rest, _ := strings.Cut(k, "{")
			if name != "rocelab_collective_bus_bytes_total" {
				continue
			}
			lab := strings.TrimSuffix(rest, "}")
			tk := key("rocelab_collective_iteration_seconds_total", strings.Split(lab, ",")...)
			if dsec := cur.vals[tk] - prev.vals[tk]; dsec > 0 {
				f.Collective = append(f.Collective, Rate{Name: strings.ReplaceAll(lab, ",", "/job"), Bps: (v - prev.vals[k]) / dsec})
			}
		}
	}
	sort.Slice(f.QPs, func(i, j int) bool { return f.QPs[i].Name < f.QPs[j].Name })
	sort.Slice(f.Collective, func(i, j int) bool { return f.Collective[i].Name < f.Collective[j].Name })
	return f
}
