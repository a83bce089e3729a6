package grafana

import "strings"

// Panel is one panel of a generated dashboard, as data: the generator
// builds it with the Grafana Foundation SDK and the tests run every Expr
// against a real Prometheus.
type Panel struct {
	Title, Description string
	Kind               string // timeseries, heatmap or stat
	Unit               string // Grafana unit id
	Exprs              []Query
	// Incast says every query of the panel must return data while a lab
	// runs an incast (the test's condition), and NonZero that some value of
	// the panel must be above zero then.
	Incast, NonZero bool
}

// Query is one PromQL expression and its legend.
type Query struct{ Expr, Legend string }

// Dashboard is one generated dashboard.
type Dashboard struct {
	UID, Title, Description string
	Panels                  []Panel
}

// Real-unit rates: the emulation runs k times slower than the wall clock,
// so a counter's rate is divided by the rate of its node's fabric clock.
const (
	perFabricSecond = ` / on(lab, node) group_left rate(rocelab_fabric_seconds_total{lab="$lab"}[$__rate_interval])`
	lab             = `lab="$lab"`
)

func rate(metric, sel string) string {
	return `rate(` + metric + `{` + lab + sel + `}[$__rate_interval])`
}

// Dashboards are the generated dashboards: fabric overview, NIC and QP
// detail, collectives, faults and emulation health.
func Dashboards() []Dashboard {
	return []Dashboard{
		{UID: "rocelab-fabric", Title: "rocelab / fabric overview",
			Description: "Link utilisation, queue depth, PFC against ECN, drops: the lossless fabric at a glance. Rates are in real (fabric) units.",
			Panels: []Panel{
				{Title: "Link utilisation (switch egress)", Kind: "timeseries", Unit: "percentunit", Incast: true, NonZero: true,
					Description: "Bytes sent per fabric second over the port's line rate.",
					Exprs:       []Query{{`(` + rate("rocelab_switch_port_tx_bytes_total", "") + perFabricSecond + `) / on(lab, node, port) rocelab_port_speed_bytes_per_second{` + lab + `}`, "{{node}}:{{port}}"}}},
				{Title: "Queue depth per switch port", Kind: "heatmap", Unit: "bytes", Incast: true, NonZero: true,
					Exprs: []Query{{`sum by (node, port) (rocelab_queue_depth_bytes{` + lab + `})`, "{{node}}:{{port}}"}}},
				{Title: "PFC: fraction of time paused, per priority", Kind: "timeseries", Unit: "percentunit", Incast: true, NonZero: true,
					Description: "rx: the port's egress held by received pauses; tx: the port holding its upstream in XOFF.",
					Exprs:       []Query{{`sum by (lab, node, port, direction, priority) (` + rate("rocelab_pfc_pause_duration_seconds_total", "") + `)` + perFabricSecond, "{{node}}:{{port}} {{direction}} prio {{priority}}"}}},
				{Title: "PFC paused time, total per switch", Kind: "stat", Unit: "s", Incast: true, NonZero: true,
					Exprs: []Query{{`sum by (node) (rocelab_pfc_pause_duration_seconds_total{` + lab + `, direction="tx"})`, "{{node}}"}}},
				{Title: "PFC pause frames per fabric second", Kind: "timeseries", Unit: "pps", Incast: true,
					Exprs: []Query{{`sum by (lab, node, direction, priority) (` + rate("rocelab_pfc_pause_frames_total", "") + `)` + perFabricSecond, "{{node}} {{direction}} prio {{priority}}"}}},
				{Title: "ECN-marked fraction of transmitted frames", Kind: "timeseries", Unit: "percentunit", Incast: true,
					Description: "Beside the PFC panels: DCQCN works when ECN marks before PFC pauses.",
					Exprs:       []Query{{`sum by (node, port) (` + rate("rocelab_ecn_marked_packets_total", "") + `) / sum by (node, port) (` + rate("rocelab_switch_port_tx_frames_total", "") + `)`, "{{node}}:{{port}}"}}},
				{Title: "Drops by cause", Kind: "timeseries", Unit: "short",
					Exprs: []Query{{`sum by (node, cause) (increase(rocelab_switch_dropped_packets_total{` + lab + `}[$__rate_interval]))`, "{{node}} {{cause}}"}}},
				{Title: "PFC watchdog", Kind: "stat", Unit: "short", Incast: true,
					Exprs: []Query{{`sum by (node) (rocelab_pfcwd_storm_detected_total{` + lab + `})`, "{{node}} storms"}, {`sum by (node) (rocelab_pfcwd_storm_restored_total{` + lab + `})`, "{{node}} restored"}}},
			}},
		{UID: "rocelab-nic", Title: "rocelab / NICs and QPs",
			Description: "Per NIC and QP: rates, CNPs, retransmissions and timeouts, named after the RDMA hw_counters.",
			Panels: []Panel{
				{Title: "NIC transmit rate", Kind: "timeseries", Unit: "Bps", Incast: true, NonZero: true,
					Exprs: []Query{{rate("rocelab_nic_tx_bytes_total", "") + perFabricSecond, "{{node}}:{{nic}}"}}},
				{Title: "QP transmit rate", Kind: "timeseries", Unit: "Bps", Incast: true, NonZero: true,
					Exprs: []Query{{rate("rocelab_qp_tx_bytes_total", "") + perFabricSecond, "{{node}}:{{nic}} {{qp}}"}}},
				{Title: "Congestion-control rate per path", Kind: "timeseries", Unit: "Bps", Incast: true,
					Exprs: []Query{{`rocelab_qp_path_rate_bytes_per_second{` + lab + `}`, "{{node}}:{{nic}} {{qp}} path {{path}}"}}},
				{Title: "CNPs (np_cnp_sent, rp_cnp_handled)", Kind: "timeseries", Unit: "pps", Incast: true,
					Exprs: []Query{{rate("rocelab_nic_np_cnp_sent_total", "") + perFabricSecond, "{{node}}:{{nic}} sent"}, {rate("rocelab_nic_rp_cnp_handled_total", "") + perFabricSecond, "{{node}}:{{nic}} handled"}}},
				{Title: "ECN-marked RoCE packets received", Kind: "timeseries", Unit: "pps", Incast: true,
					Exprs: []Query{{rate("rocelab_nic_np_ecn_marked_roce_packets_total", "") + perFabricSecond, "{{node}}:{{nic}}"}}},
				{Title: "Retransmissions, sequence errors, timeouts", Kind: "timeseries", Unit: "short", Incast: true,
					Exprs: []Query{
						{`increase(rocelab_nic_retransmitted_packets_total{` + lab + `}[$__rate_interval])`, "{{node}}:{{nic}} retransmitted"},
						{`increase(rocelab_nic_packet_seq_err_total{` + lab + `}[$__rate_interval])`, "{{node}}:{{nic}} packet_seq_err"},
						{`increase(rocelab_nic_local_ack_timeout_err_total{` + lab + `}[$__rate_interval])`, "{{node}}:{{nic}} local_ack_timeout_err"},
						{`increase(rocelab_nic_out_of_sequence_total{` + lab + `}[$__rate_interval])`, "{{node}}:{{nic}} out_of_sequence"}}},
				{Title: "NIC paused by PFC", Kind: "timeseries", Unit: "percentunit", Incast: true,
					Exprs: []Query{{rate("rocelab_nic_pfc_pause_duration_seconds_total", "") + perFabricSecond, "{{node}}:{{nic}}"}}},
			}},
		{UID: "rocelab-collectives", Title: "rocelab / collectives",
			Description: "NCCL-style collectives: busbw (nccl-tests' definition) and iteration time, in real units.",
			Panels: []Panel{
				{Title: "busbw", Kind: "timeseries", Unit: "Bps",
					Exprs: []Query{{`rate(rocelab_collective_bus_bytes_total{` + lab + `}[$__rate_interval]) / rate(rocelab_collective_iteration_seconds_total{` + lab + `}[$__rate_interval])`, "{{node}} job {{job}}"}}},
				{Title: "Iteration time", Kind: "timeseries", Unit: "s",
					Exprs: []Query{{`rate(rocelab_collective_iteration_seconds_total{` + lab + `}[$__rate_interval]) / rate(rocelab_collective_iterations_total{` + lab + `}[$__rate_interval])`, "{{node}} job {{job}}"}}},
				{Title: "Wrong elements", Kind: "stat", Unit: "short",
					Exprs: []Query{{`sum(rocelab_collective_wrong_elements_total{` + lab + `})`, "wrong"}}},
			}},
		{UID: "rocelab-faults", Title: "rocelab / faults and emulation health",
			Description: "Live faults (also shown as annotations on every dashboard), what they hit, and whether the emulation keeps up.",
			Panels: []Panel{
				{Title: "Active faults", Kind: "stat", Unit: "short", Incast: true, NonZero: true,
					Exprs: []Query{{`sum(rocelab_faults_active{` + lab + `})`, "faults"}}},
				{Title: "Fault hits", Kind: "timeseries", Unit: "short",
					Exprs: []Query{{`sum by (node, port, kind, event) (increase(rocelab_fault_packets_total{` + lab + `}[$__rate_interval]))`, "{{node}}:{{port}} {{kind}} {{event}}"}}},
				{Title: "Nodes up", Kind: "stat", Unit: "short", Incast: true, NonZero: true,
					Exprs: []Query{{`sum(rocelab_node_up{` + lab + `})`, "up"}, {`count(rocelab_node_up{` + lab + `} == 0) or vector(0)`, "down"}}},
				{Title: "Event-loop lag (p99, wall clock)", Kind: "timeseries", Unit: "s", Incast: true,
					Exprs: []Query{{`rocelab_emulation_loop_lag_seconds{` + lab + `, stat="p99"}`, "{{node}}"}}},
				{Title: "Time dilation factor", Kind: "stat", Unit: "short", Incast: true, NonZero: true,
					Exprs: []Query{{`max(rocelab_emulation_dilation_factor{` + lab + `})`, "k"}}},
			}},
	}
}

// FaultAnnotation is the PromQL of the fault annotation every dashboard
// carries: a mark where the number of live faults changes.
const FaultAnnotation = `changes(rocelab_faults_active{lab="$lab"}[1m]) > 0`

// Substitute fills the dashboard variables of expr as Grafana would: the
// lab and the rate interval.
func Substitute(expr, lab, rateInterval string) string {
	return strings.NewReplacer("$lab", lab, "$__rate_interval", rateInterval).Replace(expr)
}
