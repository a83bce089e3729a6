package telemetry

import (
	"reflect"
	"slices"
	"sort"
	"strconv"
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

// switchLike is a source shaped like a 64-port switch's telemetry: a few
// names over port and tc labels, emitted port by port.
type switchLike struct{ ports int }

func (s switchLike) Collect(emit func(Sample)) {
	for p := range s.ports {
		for tc := range 8 {
			for _, name := range []string{"switch_queue_bytes", "switch_tx_frames_total", "switch_drop_packets_total"} {
				emit(Sample{Name: name, Kind: Counter, Value: float64(p*8 + tc),
					Labels: []Label{{Name: "node", Value: "rtsw1"}, {Name: "port", Value: strconv.Itoa(p)}, {Name: "tc", Value: strconv.Itoa(tc)}}})
			}
		}
	}
	emit(Sample{Name: "a_first", Value: 1})
	emit(Sample{Name: "a_first", Value: 2}) // equal keys keep their order
}

// sortByString is the order Sort must give: by String(), stable.
func sortByString(samples []Sample) {
	sort.SliceStable(samples, func(i, j int) bool { return samples[i].String() < samples[j].String() })
}

func TestSortIsStringOrder(t *testing.T) {
	for _, ports := range []int{0, 1, 3, 64} {
		t.Run(strconv.Itoa(ports), func(t *testing.T) {
			got := Collect(switchLike{ports})
			want := slices.Clone(got)
			Sort(got)
			sortByString(want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Sort differs from the String() order")
			}
			if g := Gather(switchLike{ports}); !reflect.DeepEqual(g, want) {
				t.Fatalf("Gather differs from Collect + Sort")
			}
			if got[0].Name != "a_first" || got[0].Value != 1 || got[1].Value != 2 {
				t.Fatalf("equal keys reordered: %v %v", got[0], got[1])
			}
		})
	}
}

// BenchmarkSort sorts a 64-port switch's samples (1,538) with keys built
// once (Sort) and, side by side, by String() in every comparison (the
// former Gather).
func BenchmarkSort(b *testing.B) {
	base := Collect(switchLike{64})
	for _, c := range []struct {
		name string
		sort func([]Sample)
	}{{"keyed", Sort}, {"string-per-compare", sortByString}} {
		b.Run(c.name, func(b *testing.B) {
			s := make([]Sample, len(base))
			for range b.N {
				copy(s, base)
				c.sort(s)
			}
		})
	}
}

func TestCollectIf(t *testing.T) {
	a := fakeSource{{Name: "x_total", Value: 1}, {Name: "y_bytes", Value: 2}}
	b := fakeSource{{Name: "x_total", Value: 3}}
	for _, c := range []struct {
		name string
		keep func(string) bool
		want []float64
	}{
		{"all", nil, []float64{1, 2, 3}},
		{"one name", func(n string) bool { return n == "x_total" }, []float64{1, 3}},
		{"none", func(string) bool { return false }, nil},
	} {
		var got []float64
		for _, s := range CollectIf(c.keep, a, b) {
			got = append(got, s.Value)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: values %v, want %v", c.name, got, c.want)
		}
	}
}
