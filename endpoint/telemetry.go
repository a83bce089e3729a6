package endpoint

import (
	"strconv"
	"unsafe"

	"github.com/rocelab/rocelab/core/telemetry"
)

type nicCounters struct {
	txPkts, txBytes, rxPkts, rxBytes int64
	rxOther, badICRC, noQP           int64
	cnpRx                            int64
}

// TelemetryQPRows is how many QPs of a NIC have telemetry rows of their
// own: QPs created while that many are shown are summed into one row,
// qp="others" (and the destroyed shown ones into qp="retired"), so that
// sums over qp stay right and a NIC's telemetry stays bounded.
const TelemetryQPRows = 64

type qpCounters struct {
	txPkts, txBytes, rxPkts, rxBytes, rxDataBytes int64
	retxPkts, rewinds, timeouts, lostPkts         int64
	acksTx, acksRx, naksTx, naksRx, rnrTx, rnrRx  int64
	sacksTx, sacksRx, sackHoles, trimsRx, eceRx   int64
	cnpTx, cnpRx, ceRx                            int64
	dupPkts, outOfOrder, rxDropped                int64
	readRespTx, hellosTx, fallbacks               int64
	grantsTx, grantsRx, creditReqTx, creditReqRx  int64
	reselections                                  int64
	spuriousRetx                                  int64 // MetaRoCE: retransmissions found needless
}

// qpCounterWords is the number of int64 fields of qpCounters (every field
// is one; TestQPCountersAllInt64 checks).
const qpCounterWords = unsafe.Sizeof(qpCounters{}) / 8

// add adds o's counters to c.
func (c *qpCounters) add(o *qpCounters) {
	a := (*[qpCounterWords]int64)(unsafe.Pointer(c))
	b := (*[qpCounterWords]int64)(unsafe.Pointer(o))
	for i := range a {
		a[i] += b[i]
	}
}

// Collect emits the NIC's counters and those of its QPs (telemetry.Source).
// Labels: node (the NIC's name), and qp (the QPN in hex) for QP samples.
func (n *NIC) Collect(emit func(telemetry.Sample)) { n.collect(true, emit) }

// CollectNamed is Collect leaving out the per-path samples of MetaRoCE
// QPs unless want asks for one (telemetry.NamedSource): with 64 paths
// they are most of a NIC's samples.
func (n *NIC) CollectNamed(want func(name string) bool, emit func(telemetry.Sample)) {
	n.collect(want(pathRateSample) || want(pathLostSample), emit)
}

// The per-path samples' names.
const (
	pathRateSample = "qp_path_rate_bytes_per_second"
	pathLostSample = "qp_path_lost_packets_total"
)

func (n *NIC) collect(paths bool, emit func(telemetry.Sample)) {
	node := []telemetry.Label{{Name: "node", Value: n.opts.Name}}
	c := func(name string, v int64) {
		emit(telemetry.Sample{Name: name, Kind: telemetry.Counter, Labels: node, Value: float64(v)})
	}
	c("nic_tx_packets_total", n.ctr.txPkts)
	c("nic_tx_bytes_total", n.ctr.txBytes)
	c("nic_rx_packets_total", n.ctr.rxPkts)
	c("nic_rx_bytes_total", n.ctr.rxBytes)
	c("nic_rx_bad_icrc_total", n.ctr.badICRC)
	c("nic_rx_no_qp_total", n.ctr.noQP)
	c("nic_rx_other_total", n.ctr.rxOther)
	c("nic_cnp_rx_total", n.ctr.cnpRx)
	emit(telemetry.Sample{Name: "nic_qps", Kind: telemetry.Gauge, Labels: node, Value: float64(n.qps.Len())})
	for i := range 8 {
		if n.pfc.Frames[i] == 0 {
			continue
		}
		l := telemetry.With(node, telemetry.Label{Name: "prio", Value: strconv.Itoa(i)})
		emit(telemetry.Sample{Name: "nic_pfc_rx_frames_total", Kind: telemetry.Counter, Labels: l, Value: float64(n.pfc.Frames[i])})
		emit(telemetry.Sample{Name: "nic_paused_seconds_total", Kind: telemetry.Counter, Labels: l, Value: n.PausedTime(i).Seconds()})
	}
	others := n.othersGone
	n.qps.Each(func(_ uint32, qp *QP) {
		if qp.aggregated {
			others.add(&qp.ctr)
		} else {
			qp.collect(node, paths, emit)
		}
	})
	if n.anyOthers {
		// QPs past the first TelemetryQPRows, summed: a NIC with
		// thousands of QPs keeps its telemetry (and a scrape) small.
		emitQPCounters(telemetry.With(node, telemetry.Label{Name: "qp", Value: "others"}), &others, emit)
	}
	if n.retiredQPs > 0 {
		// QPs destroyed so far (rdmacomm's OnDemand pairs come and go by
		// the thousand), summed, so that totals over qp stay right.
		retired := telemetry.With(node, telemetry.Label{Name: "qp", Value: "retired"})
		emitQPCounters(retired, &n.retired, emit)
	}
}

// QPStats is a snapshot of a QP's counters.
type QPStats struct {
	TxPackets, TxBytes, RxPackets, RxBytes, RxDataBytes int64
	Retransmits, Rewinds, Timeouts, Lost                int64
	AcksTx, AcksRx, NaksTx, NaksRx, RNRTx, RNRRx        int64
	SACKsTx, SACKsRx, SACKHoles, TrimsRx                int64
	CNPsTx, CNPsRx, CERx                                int64
	Duplicates, OutOfOrder, Dropped                     int64
	PathReselections                                    int64
	Fallbacks                                           int64
	SpuriousRetransmits                                 int64
}

// Stats returns the QP's counters.
func (qp *QP) Stats() QPStats {
	c := &qp.ctr
	return QPStats{c.txPkts, c.txBytes, c.rxPkts, c.rxBytes, c.rxDataBytes,
		c.retxPkts, c.rewinds, c.timeouts, c.lostPkts,
		c.acksTx, c.acksRx, c.naksTx, c.naksRx, c.rnrTx, c.rnrRx,
		c.sacksTx, c.sacksRx, c.sackHoles, c.trimsRx,
		c.cnpTx, c.cnpRx, c.ceRx, c.dupPkts, c.outOfOrder, c.rxDropped, c.reselections, c.fallbacks, c.spuriousRetx}
}

func (qp *QP) collect(node []telemetry.Label, paths bool, emit func(telemetry.Sample)) {
	l := telemetry.With(node, telemetry.Label{Name: "qp", Value: "0x" + strconv.FormatUint(uint64(qp.qpn), 16)})
	emitQPCounters(l, &qp.ctr, emit)
	if paths {
		qp.collectPaths(l, emit)
	}
	emit(telemetry.Sample{Name: "qp_outstanding_psns", Kind: telemetry.Gauge, Labels: l, Value: float64(qp.req.maxSent - qp.req.una)})
}

// emitQPCounters emits the counters of one QP (or of the retired ones)
// with labels l.
func emitQPCounters(l []telemetry.Label, s *qpCounters, emit func(telemetry.Sample)) {
	c := func(name string, v int64) {
		emit(telemetry.Sample{Name: name, Kind: telemetry.Counter, Labels: l, Value: float64(v)})
	}
	for _, x := range []struct {
		name string
		v    int64
	}{
		{"qp_tx_packets_total", s.txPkts}, {"qp_tx_bytes_total", s.txBytes},
		{"qp_rx_packets_total", s.rxPkts}, {"qp_rx_bytes_total", s.rxBytes},
		{"qp_rx_data_bytes_total", s.rxDataBytes}, {"qp_retransmits_total", s.retxPkts},
		{"qp_rewinds_total", s.rewinds}, {"qp_timeouts_total", s.timeouts},
		{"qp_lost_packets_total", s.lostPkts}, {"qp_naks_tx_total", s.naksTx},
		{"qp_naks_rx_total", s.naksRx}, {"qp_rnr_naks_tx_total", s.rnrTx},
		{"qp_rnr_naks_rx_total", s.rnrRx}, {"qp_acks_tx_total", s.acksTx},
		{"qp_acks_rx_total", s.acksRx}, {"qp_sacks_tx_total", s.sacksTx},
		{"qp_sacks_rx_total", s.sacksRx}, {"qp_sack_holes_total", s.sackHoles},
		{"qp_trimmed_rx_total", s.trimsRx}, {"qp_cnp_tx_total", s.cnpTx},
		{"qp_cnp_rx_total", s.cnpRx}, {"qp_ecn_ce_rx_total", s.ceRx},
		{"qp_duplicates_total", s.dupPkts}, {"qp_out_of_order_total", s.outOfOrder},
		{"qp_rx_dropped_total", s.rxDropped}, {"qp_path_reselections_total", s.reselections},
		{"qp_credit_grants_tx_total", s.grantsTx}, {"qp_credit_grants_rx_total", s.grantsRx},
		{"qp_credit_requests_tx_total", s.creditReqTx}, {"qp_mode_fallbacks_total", s.fallbacks},
		{"qp_spurious_retransmits_total", s.spuriousRetx},
	} {
		c(x.name, x.v)
	}
}

// collectPaths emits the per-path samples of the QP.
func (qp *QP) collectPaths(l []telemetry.Label, emit func(telemetry.Sample)) {
	for _, pa := range qp.req.paths {
		pl := telemetry.With(l, telemetry.Label{Name: "path", Value: strconv.Itoa(int(pa.idx))})
		emit(telemetry.Sample{Name: pathRateSample, Kind: telemetry.Gauge, Labels: pl, Value: float64(pa.cc.Rate()) / 8})
		emit(telemetry.Sample{Name: pathLostSample, Kind: telemetry.Counter, Labels: pl, Value: float64(pa.lostPkts)})
	}
}
