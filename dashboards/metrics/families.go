package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rocelab/rocelab/core/telemetry"
)

// family is one exported metric. Its name is the model's sample name (the
// collector adds "rocelab_"): one vocabulary from the model to /metrics.
// labels are the label names after "lab"; from gives their values for one
// of the node's samples (false: the sample does not belong). A family with
// no from is not a model sample but a fact of the lab (node_up, port
// speeds, live faults) that Convert adds itself.
type family struct {
	name   string
	help   string
	typ    prometheus.ValueType
	labels []string
	from   func(n *NodeReading, s telemetry.Sample) ([]string, bool)
}

// scope is a family's label names and how a sample gives their values.
type scope struct {
	labels []string
	from   func(n *NodeReading, s telemetry.Sample) ([]string, bool)
}

var (
	onNode   = scope{[]string{"node"}, nodeL}
	onPort   = scope{[]string{"node", "port"}, labelsL("port")}
	onQueue  = scope{[]string{"node", "port", "tc"}, labelsL("port", "tc")}
	onPG     = scope{[]string{"node", "port", "pg"}, labelsL("port", "pg")}
	onDrop   = scope{[]string{"node", "port", "tc", "reason"}, labelsL("port", "tc", "reason")}
	onNIC    = scope{[]string{"node", "nic"}, nicL()}
	onNICPri = scope{[]string{"node", "nic", "prio"}, nicL("prio")}
	onQP     = scope{[]string{"node", "nic", "qp"}, nicL("qp")}
	onPath   = scope{[]string{"node", "nic", "qp", "path"}, nicL("qp", "path")}
	onJob    = scope{[]string{"node", "job", "kind"}, labelsL("job", "kind")}
	onColl   = scope{[]string{"node", "job"}, labelsL("job")}
	onFault  = scope{[]string{"node", "port", "fault", "kind", "event"}, faultL}
	onLag    = scope{[]string{"node", "stat"}, wallQuantileL}
)

// onLabel is a node-level scope with one more label of the sample's.
func onLabel(name string) scope { return scope{[]string{"node", name}, labelsL(name)} }

const (
	counter = prometheus.CounterValue
	gauge   = prometheus.GaugeValue
)

func sample(name, help string, typ prometheus.ValueType, sc scope) *family {
	return &family{name: name, help: help, typ: typ, labels: sc.labels, from: sc.from}
}

func fact(name, help string, typ prometheus.ValueType, labels ...string) *family {
	return &family{name: name, help: help, typ: typ, labels: labels}
}

// The lab's own facts.
var (
	famUp         = fact("node_up", "1 when the node process answered this scrape, 0 when it is dead or unreachable.", gauge, "node", "kind")
	famPortSpeed  = fact("port_speed_bytes_per_second", "Line rate of the port in real (fabric) units.", gauge, "node", "port")
	famFaultsLive = fact("faults_active", "Faults placed on the node now.", gauge, "node")
)

// families are every exported family. docs/metrics.md lists them with the
// counters operators know them by (SONiC's PFC and watchdog statistics,
// the RDMA hw_counters); TestDocsListEveryFamily keeps the two in step.
var families = []*family{
	famUp,
	sample("emu_fabric_seconds_total", "Fabric (simulated real-unit) time the node has run; divide a rate by this rate to get real-unit rates at any scale.", counter, onNode),
	sample("emu_scale_factor", "Scale factor k of the node: one fabric second takes k wall-clock seconds.", gauge, onNode),
	sample("emu_dilation_factor", "Deprecated: use emu_scale_factor; removed in the next release.", gauge, onNode),
	sample("emu_batch_lag_seconds", "Wall-clock lateness of the node's event-loop batches against their due time: stat p50, p90, p99, p999 or max of the recent batches.", gauge, onLag),
	sample("emu_busy_ratio", "Fraction of wall-clock time the node's event loop spends working.", gauge, onNode),
	sample("emu_behind", "1 while the node's loop is behind the lab's dilated clock (the last second's frames from other processes read more than 200 ns late on average, or a batch more than 50 us late, fabric time): what the lab measures now is not the fabric's.", gauge, onNode),
	sample("emu_batches_total", "Event-loop batches the node has run.", counter, onNode),
	sample("emu_lagged_batches_total", "Event-loop batches that ran late.", counter, onNode),
	sample("node_goroutines", "Goroutines of the node process now (Go's go_goroutines, per node): flat while the lab runs, or something leaks.", gauge, onNode),
	sample("node_heap_live_bytes", "Heap bytes the node process's last garbage collection found live: flat while the lab runs, or something leaks (RSS also keeps the biggest burst's pages).", gauge, onNode),
	famPortSpeed,
	sample("switch_port_rx_bytes_total", "Bytes received on the switch port.", counter, onPort),
	sample("switch_port_tx_bytes_total", "Bytes transmitted on the switch port, PFC frames included.", counter, onPort),
	sample("switch_port_rx_packets_total", "Frames received on the switch port.", counter, onPort),
	sample("switch_port_tx_packets_total", "Frames transmitted on the switch port, PFC frames included.", counter, onPort),
	sample("switch_port_control_replies_total", "Replies the switch's control plane sent out of the port (ARP, neighbour advertisements, echo replies for its own addresses).", counter, onPort),
	sample("switch_port_pfc_rx_frames_total", "PFC frames the switch port received, every priority, pause times zero or not.", counter, onPort),
	sample("switch_port_pfc_tx_frames_total", "PFC frames the switch port sent, every priority, XOFF and XON.", counter, onPort),
	sample("switch_queue_depth_bytes", "Bytes queued in the egress queue of the port's traffic class now.", gauge, onQueue),
	sample("switch_queue_peak_bytes", "Deepest the egress queue has been.", gauge, onQueue),
	sample("switch_queue_tx_bytes_total", "Bytes the egress queue transmitted.", counter, onQueue),
	sample("switch_queue_ecn_marked_packets_total", "Packets the egress queue marked CE (WRED/ECN).", counter, onQueue),
	sample("switch_queue_pfc_rx_frames_total", "PFC (802.1Qbb) pause frames with a non-zero time the port received and its egress queue obeyed (SONiC PFCn_RX_PKTS).", counter, onQueue),
	sample("switch_queue_paused_seconds_total", "Fabric time the egress queue was held by received pauses.", counter, onQueue),
	sample("switch_queue_paused", "1 while the egress queue is paused now.", gauge, onQueue),
	sample("switch_pg_pfc_xoff_frames_total", "PFC pause frames (XOFF) the port's ingress priority group sent upstream (SONiC PFCn_TX_PKTS).", counter, onPG),
	sample("switch_pg_pfc_xon_frames_total", "PFC frames with pause time zero (XON) the priority group sent upstream.", counter, onPG),
	sample("switch_pg_xoff_seconds_total", "Fabric time the priority group held its upstream in XOFF.", counter, onPG),
	sample("switch_pg_xoff", "1 while the priority group holds its upstream in XOFF now.", gauge, onPG),
	sample("switch_drop_packets_total", "Packets the switch dropped, by reason.", counter, onDrop),
	sample("switch_drop_bytes_total", "Bytes the switch dropped, by reason.", counter, onDrop),
	sample("switch_queue_watchdog_events_total", "PFC watchdog storms detected on the queue (SONiC show pfcwd stats: STORM DETECTED).", counter, onQueue),
	sample("switch_queue_watchdog_restores_total", "PFC watchdog restorations of the queue (SONiC show pfcwd stats: STORM RESTORED).", counter, onQueue),
	sample("switch_buffer_used_bytes", "Bytes of the switch's shared buffer in use now.", gauge, onNode),
	sample("switch_buffer_size_bytes", "Size of the switch's shared buffer.", gauge, onNode),
	sample("nic_tx_bytes_total", "Bytes the NIC transmitted (port_xmit_data).", counter, onNIC),
	sample("nic_rx_bytes_total", "Bytes the NIC received (port_rcv_data).", counter, onNIC),
	sample("nic_tx_packets_total", "Packets the NIC transmitted (port_xmit_packets).", counter, onNIC),
	sample("nic_rx_packets_total", "Packets the NIC received (port_rcv_packets).", counter, onNIC),
	sample("nic_cnp_rx_total", "CNPs the NIC handled as reaction point (hw_counters rp_cnp_handled).", counter, onNIC),
	sample("nic_rx_bad_icrc_total", "Received packets with a bad ICRC (hw_counters rx_icrc_encapsulated).", counter, onNIC),
	sample("nic_qps", "Live QPs on the NIC (the lab's and verbs programs'); per-QP families show at most 64 of them, the rest summed as qp=\"others\".", gauge, onNIC),
	sample("nic_pfc_rx_frames_total", "PFC pause frames with a non-zero time the NIC received and obeyed.", counter, onNICPri),
	sample("nic_paused_seconds_total", "Fabric time the NIC's transmitter was paused by PFC.", counter, onNICPri),
	sample("qp_tx_bytes_total", "Bytes the QP transmitted.", counter, onQP),
	sample("qp_rx_bytes_total", "Bytes the QP received.", counter, onQP),
	sample("qp_retransmits_total", "Packets the QP sent again.", counter, onQP),
	sample("qp_spurious_retransmits_total", "MetaRoCE: packets the QP sent again needlessly (the first transmission was acknowledged too soon after the resend to answer it); each widens the reordering window.", counter, onQP),
	sample("qp_timeouts_total", "Retransmission timeouts of the QP; summed by NIC, hw_counters local_ack_timeout_err.", counter, onQP),
	sample("qp_sacks_tx_total", "MetaRoCE selective acknowledgements the QP sent.", counter, onQP),
	sample("qp_sacks_rx_total", "MetaRoCE selective acknowledgements the QP received.", counter, onQP),
	sample("qp_cnp_tx_total", "CNPs the QP's receiver sent; summed by NIC, hw_counters np_cnp_sent.", counter, onQP),
	sample("qp_cnp_rx_total", "CNPs the QP's sender received.", counter, onQP),
	sample("qp_naks_rx_total", "NAKs the QP received; summed by NIC, hw_counters packet_seq_err.", counter, onQP),
	sample("qp_ecn_ce_rx_total", "CE-marked packets the QP received; summed by NIC, hw_counters np_ecn_marked_roce_packets.", counter, onQP),
	sample("qp_out_of_order_total", "Packets the QP received out of sequence; summed by NIC, hw_counters out_of_sequence.", counter, onQP),
	sample("qp_path_rate_bytes_per_second", "Congestion-control sending rate of the QP's path now, in real (fabric) units.", gauge, onPath),
	sample("job_running", "1 while the traffic job runs on the node.", gauge, onJob),
	sample("job_bytes_total", "Payload bytes the job moved.", counter, onJob),
	sample("job_messages_total", "Messages the job completed.", counter, onJob),
	sample("collective_iterations_total", "Collective iterations completed on the node.", counter, onColl),
	sample("collective_iteration_seconds_total", "Fabric time of the completed collective iterations.", counter, onColl),
	sample("collective_bus_bytes_total", "Size × nccl-tests bus factor of each completed iteration; busbw = rate of this / rate of collective_iteration_seconds_total.", counter, onColl),
	sample("collective_wrong_elements_total", "Elements that failed the collective's data check.", counter, onColl),
	sample("fault_packets_total", "Packets a live fault acted on, by event (matched, dropped, delayed, corrupted, …).", counter, onFault),
	famFaultsLive,
	sample("emu_wakeups_total", "Times the node's event loop woke, by cause: rx (a port had frames), timer (an event fell due), other (an API call, a spurious return).", counter, onLabel("cause")),
	sample("emu_loop_seconds_total", "Wall-clock time of the node's event loop by phase: read (ports), model (events), write (ports), wait (asleep).", counter, onLabel("phase")),
	sample("emu_loop_cpu_seconds_total", "CPU time of the node's event-loop thread.", counter, onNode),
	sample("node_cpu_seconds_total", "CPU time of the node's process (every thread: loop, API, garbage collector), by mode user or system.", counter, onLabel("mode")),
	sample("emu_rx_frames_total", "Frames the node's event loop read from its ports.", counter, onNode),
	sample("emu_tx_frames_total", "Frames the node's event loop wrote to its ports.", counter, onNode),
	sample("emu_rx_batches_total", "Port reads that returned frames; frames per read = rate of emu_rx_frames_total / rate of this.", counter, onNode),
	sample("emu_rx_syscalls_total", "System calls the node's port reads made (the waits are emu_wakeups_total).", counter, onNode),
	sample("emu_tx_syscalls_total", "System calls the node's port writes made.", counter, onNode),
	sample("emu_rx_late_frames_total", "Frames of a link the node delivered after they were due (sent + the link's delay): its loop read them late. A link between machines does not show the underlay's transit or clock skew here (docs/multi-machine.md).", counter, onPort),
	sample("emu_rx_late_seconds_total", "Fabric time by which the node delivered a link's late frames after they were due; mean lateness = rate of this / rate of emu_rx_late_frames_total.", counter, onPort),
	sample("emu_rx_sender_late_seconds_total", "Fabric time by which the link's far end wrote the frames this port read after its model sent them (its turn's lag, less how far the turn ran ahead), as their trailers say; the node delivers each frame a link delay after it was sent, not after it arrived. Negative when the far end mostly writes early (a loop runs up to a quarter of a link delay ahead); 0 where the far end is a kernel interface, or the lab runs without exact links (deploy --exact-links).", counter, onPort),
	sample("emu_rx_trailer_frames_total", "Frames of a link that carried their sender's lateness in a trailer (exact links: deploy --exact-links).", counter, onPort),
	sample("emu_rx_inloop_frames_total", "Frames of a link between two nodes of one group that came in memory from the model at its other end, not through the veth (deploy --node-groups; counted in emu_rx_frames_total too).", counter, onPort),
	sample("emu_rx_behind_lead_frames_total", "Frames of a link read in time but due before the node's engine clock, because its last turn ran ahead of the wall clock (by up to a quarter of the shortest link delay): delivered at the engine's clock instead.", counter, onPort),
	sample("emu_rx_behind_lead_seconds_total", "Fabric time by which the node delivered the frames of emu_rx_behind_lead_frames_total after they were due.", counter, onPort),
}

// bySample finds the family of a model sample by its name.
var bySample = func() map[string]*family {
	m := map[string]*family{}
	for _, f := range families {
		if f.from != nil {
			m[f.name] = f
		}
	}
	return m
}()

func nodeL(n *NodeReading, s telemetry.Sample) ([]string, bool) { return []string{n.Name}, true }

// labelsL gives the node's name and the sample's labels called names; a
// port label (the model's port index) becomes the port's topology name.
func labelsL(names ...string) func(*NodeReading, telemetry.Sample) ([]string, bool) {
	return func(n *NodeReading, s telemetry.Sample) ([]string, bool) {
		out := make([]string, 0, 1+len(names))
		out = append(out, n.Name)
		for _, name := range names {
			v := s.Label(name)
			if name == "port" {
				v = n.PortName(v)
			}
			out = append(out, v)
		}
		return out, true
	}
}

// nicL gives the node, the NIC and the sample's labels called names, for
// an endpoint sample: its node label is "host:nic", and a sample of
// another host does not belong.
func nicL(names ...string) func(*NodeReading, telemetry.Sample) ([]string, bool) {
	return func(n *NodeReading, s telemetry.Sample) ([]string, bool) {
		host, nic, ok := strings.Cut(s.Label("node"), ":")
		if !ok || host != n.Name {
			return nil, false
		}
		out := make([]string, 0, 2+len(names))
		out = append(out, n.Name, nic)
		for _, name := range names {
			out = append(out, s.Label(name))
		}
		return out, true
	}
}

// wallQuantileL names a wall-clock lag quantile as a stat (p50, p99, max):
// Prometheus keeps the quantile label for summaries. The fabric-clock
// quantiles are not exported.
func wallQuantileL(n *NodeReading, s telemetry.Sample) ([]string, bool) {
	q := s.Label("quantile")
	stat := map[string]string{"0.5": "p50", "0.9": "p90", "0.99": "p99", "0.999": "p999", "1": "max"}[q]
	if stat == "" {
		stat = "q" + q
	}
	return []string{n.Name, stat}, s.Label("clock") == "wall"
}

func faultL(n *NodeReading, s telemetry.Sample) ([]string, bool) {
	_, port, _ := strings.Cut(s.Label("target"), ":")
	return []string{n.Name, port, s.Label("fault"), s.Label("kind"), s.Label("event")}, true
}
