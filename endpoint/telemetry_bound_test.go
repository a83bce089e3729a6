package endpoint_test

import (
	"net/netip"
	"testing"

	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint"
)

// TestTelemetryBounded: a NIC with thousands of QPs keeps at most
// TelemetryQPRows QP rows of its own, plus one "others" row for the QPs
// created past them and one "retired" row for the destroyed shown ones.
func TestTelemetryBounded(t *testing.T) {
	nic, err := endpoint.NewNIC(endpoint.Options{Name: "n", Sched: sim.New(1), IP: netip.MustParseAddr("10.0.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	pd := nic.AllocPD()
	cq := nic.CreateCQ(0)
	var qps []*endpoint.QP
	rows := func() (n int, byQP map[string]bool) {
		byQP = map[string]bool{}
		nic.Collect(func(s telemetry.Sample) {
			if s.Name == "qp_tx_packets_total" {
				n++
				byQP[s.Label("qp")] = true
			}
		})
		return n, byQP
	}
	for _, tc := range []struct {
		create, destroy int
		wantRows        int
		others, retired bool
	}{
		{create: 10, wantRows: 10},
		{create: endpoint.TelemetryQPRows - 10, wantRows: endpoint.TelemetryQPRows},
		{create: 3000, wantRows: endpoint.TelemetryQPRows + 1, others: true},
		// Destroying shown QPs and aggregated ones: a row for each kind.
		{destroy: 2000, wantRows: endpoint.TelemetryQPRows + 2, others: true, retired: true},
	} {
		for range tc.create {
			qp, err := pd.CreateQP(endpoint.QPConfig{SendCQ: cq, RecvCQ: cq})
			if err != nil {
				t.Fatal(err)
			}
			qps = append(qps, qp)
		}
		for range tc.destroy {
			qps[0].Destroy()
			qps = qps[1:]
		}
		n, byQP := rows()
		if n > tc.wantRows || byQP["others"] != tc.others || byQP["retired"] != tc.retired {
			t.Errorf("%d QPs live: %d rows (others %v, retired %v), want at most %d (others %v, retired %v)",
				len(qps), n, byQP["others"], byQP["retired"], tc.wantRows, tc.others, tc.retired)
		}
	}
}
