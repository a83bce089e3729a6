package scenario

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/collective"
)

func TestLaptopTrain(t *testing.T) {
	s, err := Load("testdata/good/laptop-train.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "laptop-train" || s.Topology.Name != "laptop" || s.Scale != (Scale{Factor: 2000}) ||
		s.Duration != 50*clock.Millisecond || s.Seed != 1 || s.TopologyRef != "laptop" {
		t.Errorf("header: %+v", s)
	}
	train := s.Workload("train")
	var ranks []string
	for _, p := range train.Ranks {
		ranks = append(ranks, PortName(p))
	}
	if diff := cmp.Diff([]string{
		"host1:gpu0", "host1:gpu1", "host2:gpu0", "host2:gpu1",
		"host3:gpu0", "host3:gpu1", "host4:gpu0", "host4:gpu1"}, ranks); diff != "" {
		t.Errorf("ranks (-want +got):\n%s", diff)
	}
	if train.CollectiveOp != collective.AllReduce || train.Mode != endpoint.ModeMetaRoCE || train.CC != "dcqcn" ||
		train.Iters != 5 || train.Warmup != 5 || len(train.Sizes) != 7 || train.Sizes[6] != 64<<20 {
		t.Errorf("train: %+v", train)
	}
	var flows []string
	for _, w := range s.Workloads[1:] {
		for _, f := range w.Flows {
			flows = append(flows, w.Name+" "+f.String())
		}
	}
	if diff := cmp.Diff([]string{
		"bg host1:gpu0->host3:gpu1",
		"bursts host2:gpu0->host4:gpu0", "bursts host2:gpu1->host4:gpu0",
		"checkpoint host1:fe0->st1:fe0", "checkpoint host2:fe0->st1:fe0",
		"checkpoint host3:fe0->st1:fe0", "checkpoint host4:fe0->st1:fe0",
	}, flows); diff != "" {
		t.Errorf("flows (-want +got):\n%s", diff)
	}
	if bg := s.Workload("bg"); bg.Rate != 50*clock.Gbps || bg.Pattern != "elephant" {
		t.Errorf("bg: %+v", bg)
	}
	if cp := s.Workload("checkpoint"); cp.Size != 256e6 || cp.Start != 10*clock.Millisecond || cp.Iters != 1 {
		t.Errorf("checkpoint: %+v", cp)
	}
	var dirs []string
	for _, f := range s.Faults {
		for _, d := range f.Links {
			dirs = append(dirs, f.Spec.String()+" on "+d.String())
		}
	}
	if diff := cmp.Diff([]string{
		"loss 1% on rtsw1:p7->ctsw2:p1", "loss 1% on rtsw1:p8->ctsw2:p2",
		"delay 10us on rtsw2:p5->ctsw1:p3",
	}, dirs); diff != "" {
		t.Errorf("fault links (-want +got):\n%s", diff)
	}
	var ev []string
	for _, e := range s.Schedule() {
		ev = append(ev, e.At.String()+" "+map[bool]string{false: "add", true: "clear"}[e.Clear]+" "+e.Step.Kind)
	}
	if diff := cmp.Diff([]string{"2ms add loss", "7ms clear loss", "20ms add delay"}, ev); diff != "" {
		t.Errorf("schedule (-want +got):\n%s", diff)
	}
	if len(s.Expect) != 9 || s.Expect[0].Pos.Line != 46 || s.Expect[0].Pos.Col != 5 {
		t.Errorf("expect: %d, first at %v", len(s.Expect), s.Expect[0].Pos)
	}
}

func TestIncastStormAndBothDirections(t *testing.T) {
	s, err := Parse("x.yaml", []byte(`
topology: incast
duration: 1ms
faults:
  - {at: 0, target: sender3:gpu0, kind: storm, params: quanta 65535}
  - {at: 0, target: sender1<->sw1, kind: down}
`))
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Faults[0].Port; p == nil || PortName(p) != "sender3:gpu0" {
		t.Errorf("storm port %v", p)
	}
	var dirs []string
	for _, d := range s.Faults[1].Links {
		dirs = append(dirs, d.String())
	}
	if diff := cmp.Diff([]string{"sender1:gpu0->sw1:p1", "sw1:p1->sender1:gpu0"}, dirs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if s.Faults[1].Until() != clock.Never || s.Scale != (Scale{Auto: true}) || s.Name != "x" {
		t.Errorf("defaults: %+v", s)
	}
}

func TestExpand(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"h[1-3]:gpu0", "h1:gpu0 h2:gpu0 h3:gpu0", ""},
		{"host[1-2]:gpu[0-1]", "host1:gpu0 host1:gpu1 host2:gpu0 host2:gpu1", ""},
		{"r[1,3,5-6]", "r1 r3 r5 r6", ""},
		{"n[08-10]", "n08 n09 n10", ""},
		{"plain", "plain", ""},
		{"h[1-", "", "unclosed ["},
		{"h]", "", "unmatched ]"},
		{"h[]", "", "empty brackets"},
		{"h[a-2]", "", `bad number "a"`},
		{"h[1-b]", "", `bad number "b"`},
		{"h[0-99999]", "", "too long"},
	} {
		got, _, err := expand(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: got %v, want …%s…", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("%q: got %v %v, want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestSplitItems(t *testing.T) {
	got := splitItems("a[1,2]:x,  b , c")
	want := []item{{"a[1,2]:x", 0}, {"b", 11}, {"c", 15}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(item{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
