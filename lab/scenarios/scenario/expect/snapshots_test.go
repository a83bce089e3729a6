package expect

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
)

// TestLookupRetiredQPs: a QP destroyed before the last snapshot is counted
// once, in its NIC's retired row, not also through its own last reading;
// a series that merely stopped (a NIC with no retired row) keeps its last
// reading.
func TestLookupRetiredQPs(t *testing.T) {
	l := func(kv ...string) []telemetry.Label {
		var ls []telemetry.Label
		for i := 0; i < len(kv); i += 2 {
			ls = append(ls, telemetry.Label{Name: kv[i], Value: kv[i+1]})
		}
		return ls
	}
	smp := func(v float64, kv ...string) telemetry.Sample {
		return telemetry.Sample{Name: "qp_retransmits_total", Kind: telemetry.Counter, Labels: l(kv...), Value: v}
	}
	snaps := Snapshots{
		{At: clock.Time(1), Samples: []telemetry.Sample{smp(15, "node", "a1", "qp", "0x11"), smp(2, "node", "b1", "qp", "0x12")}},
		{At: clock.Time(2), Samples: []telemetry.Sample{smp(15, "node", "a1", "qp", "retired")}},
	}
	got, err := snaps.Lookup("qp_retransmits_total", nil)
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, se := range got {
		total += se.Points[len(se.Points)-1].Value
	}
	if total != 17 || len(got) != 2 {
		t.Errorf("%d series summing to %v, want a1's retired row (15) and b1's last reading (2): %+v", len(got), total, got)
	}
}
