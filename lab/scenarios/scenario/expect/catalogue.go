package expect

import (
	"slices"

	"github.com/rocelab/rocelab/core/telemetry"
)

// MetricType says how a metric's readings combine.
type MetricType uint8

// Metric types.
const (
	// Counter only grows: a bare mention is its total at the end.
	Counter MetricType = iota
	// Gauge goes up and down: a bare mention is its maximum.
	Gauge
	// Distribution is one reading per flow, message or run (flow
	// completion times, latencies, busbw per size).
	Distribution
)

// Scope is which telemetry source a sample comes from; it decides which
// label selectors apply to it and how.
type Scope uint8

// Scopes.
const (
	// OnSwitch samples are labelled node (the switch), port (the model's
	// port index: the topology port's Index-1) and tc or pg.
	OnSwitch Scope = iota
	// OnNIC samples are labelled node with the NIC's name, host:port
	// (NICName); a node=host1 selector matches every NIC of host1.
	OnNIC
	// OnJob samples are emitted by the scenario runner per workload,
	// labelled job (the workload name) and, for collectives, size (bytes).
	OnJob
	// OnFault samples come from the faults package, labelled kind.
	OnFault
)

// Sample is one telemetry sample a metric sums.
type Sample struct {
	// Name of the telemetry sample.
	Name  string
	Scope Scope
	// Class is the sample's label that carries the traffic class (tc, pg,
	// prio), or "" when the sample has none.
	Class string
	// Scale converts the sample to the metric's base unit (bytes to bits: 8).
	Scale float64
	// Match are fixed labels every reading must have.
	Match []telemetry.Label
	// Summary marks a distribution summarised while the run goes (memory
	// does not grow with its length): one reading per statistic, labelled
	// stat (one of SummaryStats) and job, plus one set without a job label
	// over every job. Only the aggregations named in SummaryStats apply to
	// it; each reads its statistic.
	Summary bool
}

// Metric is an entry of the catalogue: a friendly name for expectations.
type Metric struct {
	Name string
	Help string
	Unit Unit
	Type MetricType
	// Agg is the aggregation a bare mention uses (sum, max, avg, …).
	Agg string
	// Labels are the selectors it takes.
	Labels []string
	// Samples are the telemetry samples it adds up.
	Samples []Sample
}

// Summary reports whether m is a distribution the runner summarises while
// the run goes (its samples are Summary samples).
func (m *Metric) Summary() bool {
	for _, s := range m.Samples {
		if s.Summary {
			return true
		}
	}
	return false
}

// SummaryStats are the statistics a Summary metric's samples carry (the
// stat label) and so the aggregations it takes: nearest-rank percentiles
// and the exact count, minimum, maximum and mean.
var SummaryStats = []string{"p50", "p90", "p99", "p999", "min", "max", "avg", "count"}

// Aggregations are the functions that reduce a metric to one number:
//
//	sum, last  every series' final value, added (a counter's total)
//	max, min   the largest/smallest reading of any series at any time
//	avg        the mean of every reading
//	p50 … p999 a percentile (nearest rank) of every reading
//	rate       every series' (last-first)/(elapsed time), added
//	count      the number of readings
var Aggregations = []string{"sum", "last", "max", "min", "avg", "p50", "p90", "p99", "p999", "rate", "count"}

// Constants an expectation may name. line_rate takes job=, node= or
// nic= to mean the slowest NIC link of that selection.
var Constants = []string{"line_rate", "duration"}

// Selector labels.
const (
	LabelNode   = "node"
	LabelPort   = "port"
	LabelNIC    = "nic"
	LabelClass  = "class"
	LabelJob    = "job"
	LabelSize   = "size"
	LabelReason = "reason"
	LabelKind   = "kind"
)

// DropReasons are the values of the switch model's drop reason label.
var DropReasons = []string{"ingress_admission", "no_headroom", "ttl", "no_route", "oversize", "egress_limit", "wred", "watchdog", "no_link", "to_switch"}

// Catalogue returns the metrics expectations can name, sorted by name.
func Catalogue() []Metric {
	sw := func(name, class string, scale float64) Sample {
		return Sample{Name: name, Scope: OnSwitch, Class: class, Scale: scale}
	}
	nic := func(name, class string, scale float64) Sample {
		return Sample{Name: name, Scope: OnNIC, Class: class, Scale: scale}
	}
	job := func(name string) Sample { return Sample{Name: name, Scope: OnJob, Scale: 1} }
	// jobBytes reads a job sample in bytes (per second) as bits.
	jobBytes := func(name string) Sample { return Sample{Name: name, Scope: OnJob, Scale: 8} }
	swL := []string{LabelNode, LabelPort, LabelClass}
	bothL := []string{LabelNode, LabelPort, LabelNIC, LabelClass, LabelJob}
	nicL := []string{LabelNode, LabelNIC, LabelJob}
	portL := []string{LabelNode, LabelPort, LabelNIC, LabelJob}
	cat := []Metric{
		{"drops", "packets the switches dropped", Dimensionless, Counter, "sum", append(slices.Clone(swL), LabelReason),
			[]Sample{sw("switch_drop_packets_total", "tc", 1)}},
		{"drop_bytes", "bytes the switches dropped", Data, Counter, "sum", append(slices.Clone(swL), LabelReason),
			[]Sample{sw("switch_drop_bytes_total", "tc", 8)}},
		{"pfc_rx", "PFC frames received (switch egress queues and NICs)", Dimensionless, Counter, "sum", bothL,
			[]Sample{sw("switch_queue_pfc_rx_frames_total", "tc", 1), nic("nic_pfc_rx_frames_total", "prio", 1)}},
		{"pfc_tx", "PFC frames (XOFF and XON) the switches sent upstream", Dimensionless, Counter, "sum", swL,
			[]Sample{sw("switch_pg_pfc_xoff_frames_total", "pg", 1), sw("switch_pg_pfc_xon_frames_total", "pg", 1)}},
		{"pfc_xoff", "PFC XOFF frames the switches sent upstream", Dimensionless, Counter, "sum", swL,
			[]Sample{sw("switch_pg_pfc_xoff_frames_total", "pg", 1)}},
		{"paused_time", "time egress queues and NICs spent paused", Time, Counter, "sum", bothL,
			[]Sample{sw("switch_queue_paused_seconds_total", "tc", 1), nic("nic_paused_seconds_total", "prio", 1)}},
		{"xoff_time", "time the switches held upstream in XOFF", Time, Counter, "sum", swL,
			[]Sample{sw("switch_pg_xoff_seconds_total", "pg", 1)}},
		{"ecn_marks", "packets marked CE", Dimensionless, Counter, "sum", swL,
			[]Sample{sw("switch_queue_ecn_marked_packets_total", "tc", 1)}},
		{"trimmed", "packets trimmed to their headers", Dimensionless, Counter, "sum", swL,
			[]Sample{sw("switch_queue_trimmed_packets_total", "tc", 1)}},
		{"watchdog_events", "PFC watchdog trips", Dimensionless, Counter, "sum", swL,
			[]Sample{sw("switch_queue_watchdog_events_total", "tc", 1)}},
		{"queue_depth", "egress queue depth", Data, Gauge, "max", swL,
			[]Sample{sw("switch_queue_depth_bytes", "tc", 8)}},
		{"queue_peak", "egress queue high-water mark", Data, Gauge, "max", swL,
			[]Sample{sw("switch_queue_peak_bytes", "tc", 8)}},
		{"headroom_used", "PFC headroom in use", Data, Gauge, "max", swL,
			[]Sample{sw("switch_pg_headroom_bytes", "pg", 8)}},
		{"headroom_peak", "PFC headroom high-water mark", Data, Gauge, "max", swL,
			[]Sample{sw("switch_pg_headroom_peak_bytes", "pg", 8)}},
		{"buffer_used", "shared buffer in use", Data, Gauge, "max", []string{LabelNode},
			[]Sample{sw("switch_buffer_used_bytes", "", 8)}},
		{"buffer_peak", "shared buffer high-water mark", Data, Gauge, "max", []string{LabelNode},
			[]Sample{sw("switch_buffer_peak_bytes", "", 8)}},
		{"tx_bytes", "bytes sent by switch ports and NICs", Data, Counter, "sum", portL,
			[]Sample{sw("switch_port_tx_bytes_total", "", 8), nic("nic_tx_bytes_total", "", 8)}},
		{"rx_bytes", "bytes received by switch ports and NICs", Data, Counter, "sum", portL,
			[]Sample{sw("switch_port_rx_bytes_total", "", 8), nic("nic_rx_bytes_total", "", 8)}},
		{"tx_packets", "packets sent by switch ports and NICs", Dimensionless, Counter, "sum", portL,
			[]Sample{sw("switch_port_tx_packets_total", "", 1), nic("nic_tx_packets_total", "", 1)}},
		{"rx_packets", "packets received by switch ports and NICs", Dimensionless, Counter, "sum", portL,
			[]Sample{sw("switch_port_rx_packets_total", "", 1), nic("nic_rx_packets_total", "", 1)}},
		{"cnp_rx", "CNPs the NICs received", Dimensionless, Counter, "sum", nicL, []Sample{nic("nic_cnp_rx_total", "", 1)}},
		{"cnp_tx", "CNPs the QPs sent", Dimensionless, Counter, "sum", nicL, []Sample{nic("qp_cnp_tx_total", "", 1)}},
		{"retransmits", "packets the QPs retransmitted", Dimensionless, Counter, "sum", nicL, []Sample{nic("qp_retransmits_total", "", 1)}},
		{"timeouts", "QP retransmission timeouts", Dimensionless, Counter, "sum", nicL, []Sample{nic("qp_timeouts_total", "", 1)}},
		{"naks", "NAKs the requesters received", Dimensionless, Counter, "sum", nicL, []Sample{nic("qp_naks_rx_total", "", 1)}},
		{"lost", "packets the QPs counted lost", Dimensionless, Counter, "sum", nicL, []Sample{nic("qp_lost_packets_total", "", 1)}},
		{"out_of_order", "packets received out of order", Dimensionless, Counter, "sum", nicL, []Sample{nic("qp_out_of_order_total", "", 1)}},
		{"ce_rx", "CE-marked packets the QPs received", Dimensionless, Counter, "sum", nicL, []Sample{nic("qp_ecn_ce_rx_total", "", 1)}},
		{"bad_icrc", "frames the NICs refused for a bad ICRC", Dimensionless, Counter, "sum", nicL, []Sample{nic("nic_rx_bad_icrc_total", "", 1)}},
		{"busbw", "collective bus bandwidth per size (nccl-tests busbw)", Rate, Distribution, "max", []string{LabelJob, LabelSize},
			[]Sample{jobBytes("collective_busbw_bytes_per_second")}},
		{"algbw", "collective algorithm bandwidth per size", Rate, Distribution, "max", []string{LabelJob, LabelSize},
			[]Sample{jobBytes("collective_algbw_bytes_per_second")}},
		{"collective_time", "collective time per iteration, per size", Time, Distribution, "max", []string{LabelJob, LabelSize},
			[]Sample{job("collective_time_seconds")}},
		{"step_time", "a chakra workload's step (iteration) time: its slowest rank's", Time, Distribution, "max", []string{LabelJob},
			[]Sample{job("chakra_iteration_seconds")}},
		{"exposed_comm", "a chakra rank's communication time not overlapped by its compute, per step", Time, Distribution, "max", []string{LabelJob},
			[]Sample{job("chakra_exposed_comm_seconds")}},
		{"comm_time", "a chakra rank's time with communication in flight, per step", Time, Distribution, "max", []string{LabelJob},
			[]Sample{job("chakra_comm_seconds")}},
		{"wrong", "wrong elements the collectives found", Dimensionless, Counter, "sum", []string{LabelJob},
			[]Sample{job("collective_wrong_elements_total")}},
		{"bw", "goodput of perf, background and fe flows", Rate, Distribution, "sum", []string{LabelJob},
			[]Sample{jobBytes("flow_goodput_bytes_per_second")}},
		{"fct", "message (and burst) completion times, summarised while the run goes", Time, Distribution, "avg", []string{LabelJob},
			[]Sample{{Name: "flow_fct_seconds", Scope: OnJob, Scale: 1, Summary: true}}},
		{"flow_slowdown", "a flow's completion time (first post to last completion) over its ideal: its payload at its line rate", Dimensionless, Gauge,
			"max", []string{LabelJob}, []Sample{job("flow_slowdown_ratio")}},
		{"latency", "perf latency test readings", Time, Distribution, "p50", []string{LabelJob},
			[]Sample{job("perftest_latency_seconds")}},
		{"fault_drops", "packets the faults dropped", Dimensionless, Counter, "sum", []string{LabelKind},
			[]Sample{{Name: "fault_packets_total", Scope: OnFault, Scale: 1, Match: []telemetry.Label{{Name: "event", Value: "dropped"}}}}},
	}
	slices.SortFunc(cat, func(a, b Metric) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return cat
}

// NICName is the node label a NIC's telemetry carries: host:port.
func NICName(node, port string) string { return node + ":" + port }
