package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rocelab/rocelab/core/telemetry"
)

// family is one exported metric: its name (the collector adds "rocelab_"),
// help, type and variable labels; "lab" is always the first label.
type family struct {
	name   string
	help   string
	typ    prometheus.ValueType
	labels []string
}

var (
	lNode     = []string{"node"}
	lPort     = []string{"node", "port"}
	lQueue    = []string{"node", "port", "tc"}
	lPFC      = []string{"node", "port", "direction", "priority"}
	lWatchdog = []string{"node", "port", "priority"}
	lDrop     = []string{"node", "port", "tc", "cause"}
	lNIC      = []string{"node", "nic"}
	lQP       = []string{"node", "nic", "qp"}
	lPath     = []string{"node", "nic", "qp", "path"}
	lJob      = []string{"node", "job", "kind"}
	lColl     = []string{"node", "job"}
	lFault    = []string{"node", "port", "fault", "kind", "event"}
)

func fam(name, help string, typ prometheus.ValueType, labels []string) *family {
	return &family{name: name, help: help, typ: typ, labels: labels}
}

const (
	counter = prometheus.CounterValue
	gauge   = prometheus.GaugeValue
)

// The exported families. docs/metrics.md lists them with the counters
// operators know them by; TestDocsListEveryFamily keeps the two in step.
var (
	famUp         = fam("node_up", "1 when the node process answered this scrape, 0 when it is dead or unreachable.", gauge, []string{"node", "kind"})
	famFabric     = fam("fabric_seconds_total", "Fabric (simulated real-unit) time the node has run; divide a rate by this rate to get real-unit rates under time dilation.", counter, lNode)
	famDilation   = fam("emulation_dilation_factor", "Time dilation factor k of the node: one fabric second takes k wall-clock seconds.", gauge, lNode)
	famLag        = fam("emulation_loop_lag_seconds", "Wall-clock lateness of the node's event-loop batches against their due time: stat p50, p90, p99, p999 or max of the recent batches.", gauge, []string{"node", "stat"})
	famBusy       = fam("emulation_busy_ratio", "Fraction of wall-clock time the node's event loop spends working.", gauge, lNode)
	famBatches    = fam("emulation_batches_total", "Event-loop batches the node has run.", counter, lNode)
	famLagged     = fam("emulation_lagged_batches_total", "Event-loop batches that ran late.", counter, lNode)
	famHeapLive   = fam("node_heap_live_bytes", "Heap bytes the node process's last garbage collection found live: flat while the lab runs, or something leaks (RSS also keeps the biggest burst's pages).", gauge, lNode)
	famGoroutines = fam("node_goroutines", "Goroutines of the node process now (Go's go_goroutines, per node): flat while the lab runs, or something leaks.", gauge, lNode)
	famPortSpeed  = fam("port_speed_bytes_per_second", "Line rate of the port in real (fabric) units.", gauge, lPort)
	famPortRxB    = fam("switch_port_rx_bytes_total", "Bytes received on the switch port.", counter, lPort)
	famPortTxB    = fam("switch_port_tx_bytes_total", "Bytes transmitted on the switch port, PFC frames included.", counter, lPort)
	famPortRxF    = fam("switch_port_rx_frames_total", "Frames received on the switch port.", counter, lPort)
	famPortTxF    = fam("switch_port_tx_frames_total", "Frames transmitted on the switch port, PFC frames included.", counter, lPort)
	famQDepth     = fam("queue_depth_bytes", "Bytes queued in the egress queue of the port's traffic class now.", gauge, lQueue)
	famQPeak      = fam("queue_peak_bytes", "Deepest the egress queue has been.", gauge, lQueue)
	famQTxB       = fam("queue_tx_bytes_total", "Bytes the egress queue transmitted.", counter, lQueue)
	famECN        = fam("ecn_marked_packets_total", "Packets the egress queue marked CE (WRED/ECN).", counter, lQueue)
	famPFCFrames  = fam("pfc_pause_frames_total", "PFC (802.1Qbb) pause frames with a non-zero time: direction rx, received and obeyed by this port's egress; tx, sent upstream by this port's ingress (XOFF).", counter, lPFC)
	famPFCResume  = fam("pfc_resume_frames_total", "PFC frames with pause time zero (XON) sent upstream.", counter, lPFC)
	famPFCTime    = fam("pfc_pause_duration_seconds_total", "Fabric time a priority was paused: direction rx, this port's egress held by received pauses; tx, this port's ingress holding its upstream in XOFF.", counter, lPFC)
	famPFCPaused  = fam("pfc_paused", "1 while the priority is paused (rx) or held in XOFF (tx) now.", gauge, lPFC)
	famDropPkts   = fam("switch_dropped_packets_total", "Packets the switch dropped, by cause.", counter, lDrop)
	famDropBytes  = fam("switch_dropped_bytes_total", "Bytes the switch dropped, by cause.", counter, lDrop)
	famWDStorm    = fam("pfcwd_storm_detected_total", "PFC watchdog storms detected on the queue (SONiC show pfcwd stats: STORM DETECTED).", counter, lWatchdog)
	famWDRestored = fam("pfcwd_storm_restored_total", "PFC watchdog restorations of the queue (SONiC show pfcwd stats: STORM RESTORED).", counter, lWatchdog)
	famBufUsed    = fam("switch_buffer_used_bytes", "Bytes of the switch's shared buffer in use now.", gauge, lNode)
	famBufSize    = fam("switch_buffer_size_bytes", "Size of the switch's shared buffer.", gauge, lNode)
	famNICTxB     = fam("nic_tx_bytes_total", "Bytes the NIC transmitted (port_xmit_data).", counter, lNIC)
	famNICRxB     = fam("nic_rx_bytes_total", "Bytes the NIC received (port_rcv_data).", counter, lNIC)
	famNICTxP     = fam("nic_tx_packets_total", "Packets the NIC transmitted (port_xmit_packets).", counter, lNIC)
	famNICRxP     = fam("nic_rx_packets_total", "Packets the NIC received (port_rcv_packets).", counter, lNIC)
	famCNPSent    = fam("nic_np_cnp_sent_total", "CNPs the NIC sent as notification point (hw_counters np_cnp_sent).", counter, lNIC)
	famCNPHandled = fam("nic_rp_cnp_handled_total", "CNPs the NIC handled as reaction point (hw_counters rp_cnp_handled).", counter, lNIC)
	famECNRx      = fam("nic_np_ecn_marked_roce_packets_total", "CE-marked RoCE packets the NIC received (hw_counters np_ecn_marked_roce_packets).", counter, lNIC)
	famOOS        = fam("nic_out_of_sequence_total", "Packets that arrived out of sequence (hw_counters out_of_sequence).", counter, lNIC)
	famSeqErr     = fam("nic_packet_seq_err_total", "NAK sequence errors the requester received (hw_counters packet_seq_err).", counter, lNIC)
	famAckTimeout = fam("nic_local_ack_timeout_err_total", "Retransmission timeouts: no ACK in time (hw_counters local_ack_timeout_err).", counter, lNIC)
	famNICRetx    = fam("nic_retransmitted_packets_total", "Packets the NIC's QPs sent again.", counter, lNIC)
	famNICQPs     = fam("nic_qps", "Live QPs on the NIC (the lab's and verbs programs'); per-QP families show at most 64 of them, the rest summed as qp=\"others\".", gauge, lNIC)
	famICRC       = fam("nic_rx_icrc_errors_total", "Received packets with a bad ICRC (hw_counters rx_icrc_encapsulated).", counter, lNIC)
	famNICPFC     = fam("nic_pfc_pause_duration_seconds_total", "Fabric time the NIC's transmitter was paused by PFC, all priorities.", counter, lNIC)
	famQPTxB      = fam("qp_tx_bytes_total", "Bytes the QP transmitted.", counter, lQP)
	famQPRxB      = fam("qp_rx_bytes_total", "Bytes the QP received.", counter, lQP)
	famQPRetx     = fam("qp_retransmitted_packets_total", "Packets the QP sent again.", counter, lQP)
	famQPTimeouts = fam("qp_timeouts_total", "Retransmission timeouts of the QP.", counter, lQP)
	famQPSACKTx   = fam("qp_sacks_sent_total", "MetaRoCE selective acknowledgements the QP sent.", counter, lQP)
	famQPSACKRx   = fam("qp_sacks_received_total", "MetaRoCE selective acknowledgements the QP received.", counter, lQP)
	famQPCNPTx    = fam("qp_cnp_sent_total", "CNPs the QP's receiver sent.", counter, lQP)
	famQPCNPRx    = fam("qp_cnp_received_total", "CNPs the QP's sender received.", counter, lQP)
	famQPNAKRx    = fam("qp_naks_received_total", "NAKs the QP received.", counter, lQP)
	famPathRate   = fam("qp_path_rate_bytes_per_second", "Congestion-control sending rate of the QP's path now, in real (fabric) units.", gauge, lPath)
	famJobRunning = fam("job_running", "1 while the traffic job runs on the node.", gauge, lJob)
	famJobBytes   = fam("job_bytes_total", "Payload bytes the job moved.", counter, lJob)
	famJobMsgs    = fam("job_messages_total", "Messages the job completed.", counter, lJob)
	famCollIters  = fam("collective_iterations_total", "Collective iterations completed on the node.", counter, lColl)
	famCollTime   = fam("collective_iteration_seconds_total", "Fabric time of the completed collective iterations.", counter, lColl)
	famCollBus    = fam("collective_bus_bytes_total", "Size × nccl-tests bus factor of each completed iteration; busbw = rate of this / rate of collective_iteration_seconds_total.", counter, lColl)
	famCollWrong  = fam("collective_wrong_elements_total", "Elements that failed the collective's data check.", counter, lColl)
	famFault      = fam("fault_packets_total", "Packets a live fault acted on, by event (matched, dropped, delayed, corrupted, …).", counter, lFault)
	famFaultsLive = fam("faults_active", "Faults placed on the node now.", gauge, lNode)
	famWakeups    = fam("emulation_wakeups_total", "Times the node's event loop woke, by cause: rx (a port had frames), timer (an event fell due), other (an API call, a spurious return).", counter, []string{"node", "cause"})
	famLoopTime   = fam("emulation_loop_seconds_total", "Wall-clock time of the node's event loop by phase: read (ports), model (events), write (ports), wait (asleep).", counter, []string{"node", "phase"})
	famLoopCPU    = fam("emulation_loop_cpu_seconds_total", "CPU time of the node's event-loop thread.", counter, lNode)
	famProcCPU    = fam("emulation_process_cpu_seconds_total", "CPU time of the node's process (every thread: loop, API, garbage collector), by mode user or system.", counter, []string{"node", "mode"})
	famEmuRxF     = fam("emulation_rx_frames_total", "Frames the node's event loop read from its ports.", counter, lNode)
	famEmuTxF     = fam("emulation_tx_frames_total", "Frames the node's event loop wrote to its ports.", counter, lNode)
	famEmuRxBat   = fam("emulation_rx_batches_total", "Port reads that returned frames; frames per read = rate of emulation_rx_frames_total / rate of this.", counter, lNode)
	famEmuSys     = fam("emulation_syscalls_total", "System calls the node's port reads and writes made, by direction rx or tx (the waits are emulation_wakeups_total).", counter, []string{"node", "direction"})
)

var families = []*family{
	famUp, famFabric, famDilation, famLag, famBusy, famBatches, famLagged, famGoroutines, famHeapLive, famPortSpeed,
	famPortRxB, famPortTxB, famPortRxF, famPortTxF, famQDepth, famQPeak, famQTxB, famECN,
	famPFCFrames, famPFCResume, famPFCTime, famPFCPaused, famDropPkts, famDropBytes,
	famWDStorm, famWDRestored, famBufUsed, famBufSize,
	famNICTxB, famNICRxB, famNICTxP, famNICRxP, famCNPSent, famCNPHandled, famECNRx,
	famOOS, famSeqErr, famAckTimeout, famNICRetx, famICRC, famNICQPs, famNICPFC,
	famQPTxB, famQPRxB, famQPRetx, famQPTimeouts, famQPSACKTx, famQPSACKRx, famQPCNPTx,
	famQPCNPRx, famQPNAKRx, famPathRate,
	famJobRunning, famJobBytes, famJobMsgs, famCollIters, famCollTime, famCollBus, famCollWrong,
	famFault, famFaultsLive,
	famWakeups, famLoopTime, famLoopCPU, famProcCPU, famEmuRxF, famEmuTxF, famEmuRxBat, famEmuSys,
}

// nicSums are the NIC families summed over the NIC's QPs.
var nicSums = []*family{famCNPSent, famECNRx, famOOS, famSeqErr, famAckTimeout, famNICRetx}

// rule turns one telemetry sample into a value of a family: labels gives
// the label values after lab (false: the sample does not belong), scale
// multiplies the value (0 means 1). Rules whose family has fewer labels
// than the sample sum the samples that share their label values.
type rule struct {
	fam    *family
	scale  float64
	labels func(n *NodeReading, s telemetry.Sample) ([]string, bool)
}

func nodeL(n *NodeReading, s telemetry.Sample) ([]string, bool) { return []string{n.Name}, true }

func portL(n *NodeReading, s telemetry.Sample) ([]string, bool) {
	return []string{n.Name, n.PortName(s.Label("port"))}, true
}

func queueL(n *NodeReading, s telemetry.Sample) ([]string, bool) {
	return []string{n.Name, n.PortName(s.Label("port")), s.Label("tc")}, true
}

func pfcL(direction, prioLabel string) func(*NodeReading, telemetry.Sample) ([]string, bool) {
	return func(n *NodeReading, s telemetry.Sample) ([]string, bool) {
		if nic, ok := nicName(n, s); ok { // a NIC's own port
			return []string{n.Name, nic, direction, s.Label(prioLabel)}, true
		}
		return []string{n.Name, n.PortName(s.Label("port")), direction, s.Label(prioLabel)}, true
	}
}

func watchdogL(n *NodeReading, s telemetry.Sample) ([]string, bool) {
	return []string{n.Name, n.PortName(s.Label("port")), s.Label("tc")}, true
}

func dropL(n *NodeReading, s telemetry.Sample) ([]string, bool) {
	return []string{n.Name, n.PortName(s.Label("port")), s.Label("tc"), s.Label("reason")}, true
}

// nicName returns the NIC of an endpoint sample: its node label is
// "host:nic".
func nicName(n *NodeReading, s telemetry.Sample) (string, bool) {
	host, nic, ok := strings.Cut(s.Label("node"), ":")
	if !ok || host != n.Name {
		return "", false
	}
	return nic, true
}

func nicL(n *NodeReading, s telemetry.Sample) ([]string, bool) {
	nic, ok := nicName(n, s)
	return []string{n.Name, nic}, ok
}

func qpL(n *NodeReading, s telemetry.Sample) ([]string, bool) {
	nic, ok := nicName(n, s)
	return []string{n.Name, nic, s.Label("qp")}, ok
}

func pathL(n *NodeReading, s telemetry.Sample) ([]string, bool) {
	nic, ok := nicName(n, s)
	return []string{n.Name, nic, s.Label("qp"), s.Label("path")}, ok
}

func jobL(n *NodeReading, s telemetry.Sample) ([]string, bool) {
	return []string{n.Name, s.Label("job"), s.Label("kind")}, true
}

func collL(n *NodeReading, s telemetry.Sample) ([]string, bool) {
	return []string{n.Name, s.Label("job")}, true
}

// wallQuantileL names a lag quantile as a stat (p50, p99, max): Prometheus
// keeps the quantile label for summaries.
func wallQuantileL(n *NodeReading, s telemetry.Sample) ([]string, bool) {
	q := s.Label("quantile")
	stat := map[string]string{"0.5": "p50", "0.9": "p90", "0.99": "p99", "0.999": "p999", "1": "max"}[q]
	if stat == "" {
		stat = "q" + q
	}
	return []string{n.Name, stat}, s.Label("clock") == "wall"
}

// labelL labels a node-level family with the sample's label name.
func labelL(name string) func(*NodeReading, telemetry.Sample) ([]string, bool) {
	return func(n *NodeReading, s telemetry.Sample) ([]string, bool) {
		return []string{n.Name, s.Label(name)}, true
	}
}

// constL labels a node-level family with a fixed second value.
func constL(v string) func(*NodeReading, telemetry.Sample) ([]string, bool) {
	return func(n *NodeReading, s telemetry.Sample) ([]string, bool) { return []string{n.Name, v}, true }
}

func faultL(n *NodeReading, s telemetry.Sample) ([]string, bool) {
	_, port, _ := strings.Cut(s.Label("target"), ":")
	return []string{n.Name, port, s.Label("fault"), s.Label("kind"), s.Label("event")}, true
}

const bitsToBytes = 1.0 / 8

// rules maps telemetry sample names (core/telemetry) to families.
var rules = map[string][]rule{
	"emu_fabric_time_seconds":               {{fam: famFabric, labels: nodeL}},
	"emu_scale":                             {{fam: famDilation, labels: nodeL}},
	"emu_batch_lag_seconds":                 {{fam: famLag, labels: wallQuantileL}},
	"emu_busy_ratio":                        {{fam: famBusy, labels: nodeL}},
	"emu_batches_total":                     {{fam: famBatches, labels: nodeL}},
	"emu_lagged_batches_total":              {{fam: famLagged, labels: nodeL}},
	"node_goroutines":                       {{fam: famGoroutines, labels: nodeL}},
	"node_heap_live_bytes":                  {{fam: famHeapLive, labels: nodeL}},
	"emu_wakeups_total":                     {{fam: famWakeups, labels: labelL("cause")}},
	"emu_loop_seconds_total":                {{fam: famLoopTime, labels: labelL("phase")}},
	"emu_loop_cpu_seconds_total":            {{fam: famLoopCPU, labels: nodeL}},
	"node_cpu_seconds_total":                {{fam: famProcCPU, labels: labelL("mode")}},
	"emu_rx_frames_total":                   {{fam: famEmuRxF, labels: nodeL}},
	"emu_tx_frames_total":                   {{fam: famEmuTxF, labels: nodeL}},
	"emu_rx_batches_total":                  {{fam: famEmuRxBat, labels: nodeL}},
	"emu_rx_syscalls_total":                 {{fam: famEmuSys, labels: constL("rx")}},
	"emu_tx_syscalls_total":                 {{fam: famEmuSys, labels: constL("tx")}},
	"switch_port_rx_bytes_total":            {{fam: famPortRxB, labels: portL}},
	"switch_port_tx_bytes_total":            {{fam: famPortTxB, labels: portL}},
	"switch_port_rx_packets_total":          {{fam: famPortRxF, labels: portL}},
	"switch_port_tx_packets_total":          {{fam: famPortTxF, labels: portL}},
	"switch_queue_depth_bytes":              {{fam: famQDepth, labels: queueL}},
	"switch_queue_peak_bytes":               {{fam: famQPeak, labels: queueL}},
	"switch_queue_tx_bytes_total":           {{fam: famQTxB, labels: queueL}},
	"switch_queue_ecn_marked_packets_total": {{fam: famECN, labels: queueL}},
	"switch_queue_pfc_rx_frames_total":      {{fam: famPFCFrames, labels: pfcL("rx", "tc")}},
	"switch_queue_paused_seconds_total":     {{fam: famPFCTime, labels: pfcL("rx", "tc")}},
	"switch_queue_paused":                   {{fam: famPFCPaused, labels: pfcL("rx", "tc")}},
	"switch_pg_pfc_xoff_frames_total":       {{fam: famPFCFrames, labels: pfcL("tx", "pg")}},
	"switch_pg_pfc_xon_frames_total":        {{fam: famPFCResume, labels: pfcL("tx", "pg")}},
	"switch_pg_xoff_seconds_total":          {{fam: famPFCTime, labels: pfcL("tx", "pg")}},
	"switch_pg_xoff":                        {{fam: famPFCPaused, labels: pfcL("tx", "pg")}},
	"switch_drop_packets_total":             {{fam: famDropPkts, labels: dropL}},
	"switch_drop_bytes_total":               {{fam: famDropBytes, labels: dropL}},
	"switch_queue_watchdog_events_total":    {{fam: famWDStorm, labels: watchdogL}},
	"switch_queue_watchdog_restores_total":  {{fam: famWDRestored, labels: watchdogL}},
	"switch_buffer_used_bytes":              {{fam: famBufUsed, labels: nodeL}},
	"switch_buffer_size_bytes":              {{fam: famBufSize, labels: nodeL}},
	"nic_tx_bytes_total":                    {{fam: famNICTxB, labels: nicL}},
	"nic_rx_bytes_total":                    {{fam: famNICRxB, labels: nicL}},
	"nic_tx_packets_total":                  {{fam: famNICTxP, labels: nicL}},
	"nic_rx_packets_total":                  {{fam: famNICRxP, labels: nicL}},
	"nic_cnp_rx_total":                      {{fam: famCNPHandled, labels: nicL}},
	"nic_rx_bad_icrc_total":                 {{fam: famICRC, labels: nicL}},
	"nic_qps":                               {{fam: famNICQPs, labels: nicL}},
	"nic_pfc_rx_total":                      {{fam: famPFCFrames, labels: pfcL("rx", "prio")}},
	"nic_paused_seconds_total": {
		{fam: famPFCTime, labels: pfcL("rx", "prio")},
		{fam: famNICPFC, labels: nicL},
	},
	"qp_tx_bytes_total":                  {{fam: famQPTxB, labels: qpL}},
	"qp_rx_bytes_total":                  {{fam: famQPRxB, labels: qpL}},
	"qp_retransmits_total":               {{fam: famQPRetx, labels: qpL}, {fam: famNICRetx, labels: nicL}},
	"qp_timeouts_total":                  {{fam: famQPTimeouts, labels: qpL}, {fam: famAckTimeout, labels: nicL}},
	"qp_sacks_tx_total":                  {{fam: famQPSACKTx, labels: qpL}},
	"qp_sacks_rx_total":                  {{fam: famQPSACKRx, labels: qpL}},
	"qp_cnp_tx_total":                    {{fam: famQPCNPTx, labels: qpL}, {fam: famCNPSent, labels: nicL}},
	"qp_cnp_rx_total":                    {{fam: famQPCNPRx, labels: qpL}},
	"qp_naks_rx_total":                   {{fam: famQPNAKRx, labels: qpL}, {fam: famSeqErr, labels: nicL}},
	"qp_ecn_ce_rx_total":                 {{fam: famECNRx, labels: nicL}},
	"qp_out_of_order_total":              {{fam: famOOS, labels: nicL}},
	"qp_path_rate_bps":                   {{fam: famPathRate, labels: pathL, scale: bitsToBytes}},
	"job_running":                        {{fam: famJobRunning, labels: jobL}},
	"job_bytes_total":                    {{fam: famJobBytes, labels: jobL}},
	"job_messages_total":                 {{fam: famJobMsgs, labels: jobL}},
	"collective_iterations_total":        {{fam: famCollIters, labels: collL}},
	"collective_iteration_seconds_total": {{fam: famCollTime, labels: collL}},
	"collective_bus_bytes_total":         {{fam: famCollBus, labels: collL}},
	"collective_wrong_elements_total":    {{fam: famCollWrong, labels: collL}},
	"fault_packets_total":                {{fam: famFault, labels: faultL}},
}
