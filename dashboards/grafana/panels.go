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
	perFabricSecond = ` / on(lab, node) group_left rate(rocelab_emu_fabric_seconds_total{lab="$lab"}[$__rate_interval])`
	lab             = `lab="$lab"`
)

func rate(metric, sel string) string {
	return `rate(` + metric + `{` + lab + sel + `}[$__rate_interval])`
}

// perNIC sums a per-QP (or per-priority) expression by NIC: the RDMA
// hw_counters are the NIC's sums.
func perNIC(expr string) string { return `sum by (lab, node, nic) (` + expr + `)` }

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
					Exprs: []Query{{`sum by (node, port) (rocelab_switch_queue_depth_bytes{` + lab + `})`, "{{node}}:{{port}}"}}},
				{Title: "PFC: fraction of time paused, per priority", Kind: "timeseries", Unit: "percentunit", Incast: true, NonZero: true,
					Description: "XOFF: the port's ingress holding its upstream (pg: the priority); paused: the port's egress held by received pauses (tc).",
					Exprs: []Query{
						{rate("rocelab_switch_pg_xoff_seconds_total", "") + perFabricSecond, "{{node}}:{{port}} XOFF prio {{pg}}"},
						{rate("rocelab_switch_queue_paused_seconds_total", "") + perFabricSecond, "{{node}}:{{port}} paused prio {{tc}}"}}},
				{Title: "XOFF time, total per switch", Kind: "stat", Unit: "s", Incast: true, NonZero: true,
					Exprs: []Query{{`sum by (node) (rocelab_switch_pg_xoff_seconds_total{` + lab + `})`, "{{node}}"}}},
				{Title: "PFC pause frames per fabric second", Kind: "timeseries", Unit: "pps", Incast: true,
					Exprs: []Query{
						{`sum by (lab, node, pg) (` + rate("rocelab_switch_pg_pfc_xoff_frames_total", "") + `)` + perFabricSecond, "{{node}} sent prio {{pg}}"},
						{`sum by (lab, node, tc) (` + rate("rocelab_switch_queue_pfc_rx_frames_total", "") + `)` + perFabricSecond, "{{node}} received prio {{tc}}"}}},
				{Title: "ECN-marked fraction of transmitted frames", Kind: "timeseries", Unit: "percentunit", Incast: true,
					Description: "Beside the PFC panels: DCQCN works when ECN marks before PFC pauses.",
					Exprs:       []Query{{`sum by (node, port) (` + rate("rocelab_switch_queue_ecn_marked_packets_total", "") + `) / sum by (node, port) (` + rate("rocelab_switch_port_tx_packets_total", "") + `)`, "{{node}}:{{port}}"}}},
				{Title: "Drops by reason", Kind: "timeseries", Unit: "short",
					Exprs: []Query{{`sum by (node, reason) (increase(rocelab_switch_drop_packets_total{` + lab + `}[$__rate_interval]))`, "{{node}} {{reason}}"}}},
				{Title: "PFC watchdog", Kind: "stat", Unit: "short", Incast: true,
					Exprs: []Query{{`sum by (node) (rocelab_switch_queue_watchdog_events_total{` + lab + `})`, "{{node}} storms"}, {`sum by (node) (rocelab_switch_queue_watchdog_restores_total{` + lab + `})`, "{{node}} restored"}}},
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
					Exprs: []Query{{perNIC(rate("rocelab_qp_cnp_tx_total", "")) + perFabricSecond, "{{node}}:{{nic}} sent"}, {rate("rocelab_nic_cnp_rx_total", "") + perFabricSecond, "{{node}}:{{nic}} handled"}}},
				{Title: "ECN-marked RoCE packets received (np_ecn_marked_roce_packets)", Kind: "timeseries", Unit: "pps", Incast: true,
					Exprs: []Query{{perNIC(rate("rocelab_qp_ecn_ce_rx_total", "")) + perFabricSecond, "{{node}}:{{nic}}"}}},
				{Title: "Retransmissions, sequence errors, timeouts", Kind: "timeseries", Unit: "short", Incast: true,
					Exprs: []Query{
						{perNIC(`increase(rocelab_qp_retransmits_total{` + lab + `}[$__rate_interval])`), "{{node}}:{{nic}} retransmitted"},
						{perNIC(`increase(rocelab_qp_naks_rx_total{` + lab + `}[$__rate_interval])`), "{{node}}:{{nic}} packet_seq_err"},
						{perNIC(`increase(rocelab_qp_timeouts_total{` + lab + `}[$__rate_interval])`), "{{node}}:{{nic}} local_ack_timeout_err"},
						{perNIC(`increase(rocelab_qp_out_of_order_total{` + lab + `}[$__rate_interval])`), "{{node}}:{{nic}} out_of_sequence"}}},
				{Title: "NIC paused by PFC", Kind: "timeseries", Unit: "percentunit", Incast: true,
					Exprs: []Query{{perNIC(rate("rocelab_nic_paused_seconds_total", "")) + perFabricSecond, "{{node}}:{{nic}}"}}},
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
					Exprs: []Query{{`rocelab_emu_batch_lag_seconds{` + lab + `, stat="p99"}`, "{{node}}"}}},
				{Title: "Scale factor k", Kind: "stat", Unit: "short", Incast: true, NonZero: true,
					Exprs: []Query{{`max(rocelab_emu_scale_factor{` + lab + `})`, "k"}}},
				{Title: "Nodes behind the dilated clock", Kind: "stat", Unit: "short", Incast: true,
					Description: "Nodes whose loop does not keep up with the lab's clock now: while any is, what the lab measures is not the fabric's (rocelab inspect names them; deploy with a larger --scale).",
					Exprs:       []Query{{`sum(rocelab_emu_behind{` + lab + `})`, "behind"}}},
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
