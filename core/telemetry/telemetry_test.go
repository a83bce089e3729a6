package telemetry

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

type fakeSource []Sample

func (f fakeSource) Collect(emit func(Sample)) {
	for _, s := range f {
		emit(s)
	}
}

func TestGatherSortsAndSums(t *testing.T) {
	a := fakeSource{
		{Name: "port_tx_bytes_total", Labels: []Label{{"node", "sw2"}, {"port", "1"}}, Value: 5},
		{Name: "port_tx_bytes_total", Labels: []Label{{"node", "sw1"}, {"port", "2"}}, Value: 7},
	}
	b := fakeSource{
		{Name: "drops_total", Kind: Counter, Labels: []Label{{"node", "sw1"}, {"reason", "ingress"}}, Value: 3},
		{Name: "queue_depth_bytes", Kind: Gauge, Labels: []Label{{"node", "sw1"}}, Value: 100},
	}
	got := Gather(a, b)
	var names []string
	for _, s := range got {
		names = append(names, s.String())
	}
	want := []string{
		`drops_total{node="sw1",reason="ingress"}`,
		`port_tx_bytes_total{node="sw1",port="2"}`,
		`port_tx_bytes_total{node="sw2",port="1"}`,
		`queue_depth_bytes{node="sw1"}`,
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("Gather order (-want +got):\n%s", diff)
	}
	tests := []struct {
		name  string
		match []Label
		want  float64
	}{
		{"port_tx_bytes_total", nil, 12},
		{"port_tx_bytes_total", []Label{{"node", "sw1"}}, 7},
		{"port_tx_bytes_total", []Label{{"node", "sw3"}}, 0},
		{"drops_total", []Label{{"reason", "ingress"}}, 3},
	}
	for _, tc := range tests {
		if got := Sum(got, tc.name, tc.match...); got != tc.want {
			t.Errorf("Sum(%s, %v) = %v, want %v", tc.name, tc.match, got, tc.want)
		}
	}
	if got[3].Kind.String() != "gauge" || got[0].Kind.String() != "counter" {
		t.Errorf("kinds: %v %v", got[3].Kind, got[0].Kind)
	}
	base := []Label{{"node", "a"}}
	ext := With(base, Label{"port", "1"})
	ext[0].Value = "changed"
	if base[0].Value != "a" {
		t.Error("With aliased its input")
	}
}
