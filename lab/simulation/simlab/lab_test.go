package simlab

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/wire"
)

func TestBuildLaptop(t *testing.T) {
	l := build(t, "laptop", Options{})
	want := []string{"host1:gpu0", "host1:gpu1", "host2:gpu0", "host2:gpu1", "host3:gpu0", "host3:gpu1", "host4:gpu0", "host4:gpu1"}
	if d := cmp.Diff(want, l.NICNames()); d != "" {
		t.Errorf("NICs (-want +got):\n%s", d)
	}
	for _, name := range want {
		n, p := l.NIC(name), l.Port(name)
		if n.IP() != p.Addr.Addr() || n.LineRate() != 400*clock.Gbps {
			t.Errorf("%s: IP %v rate %v, plan says %v %v", name, n.IP(), n.LineRate(), p.Addr.Addr(), p.Rate)
		}
	}
	for _, name := range []string{"host1:fe0", "host4:fe0", "st1:fe0"} {
		if l.Host(name) == nil {
			t.Errorf("no FE sink %s", name)
		}
	}
	if len(l.Fabric().Switches()) != 5 {
		t.Errorf("%d switches, want 5", len(l.Fabric().Switches()))
	}
}

func TestBuildErrors(t *testing.T) {
	tp := build(t, "laptop", Options{}).Topology()
	for _, o := range []Options{{CC: "cubic"}, {Mode: "tcp"}, {MTU: 100}} {
		if _, err := Build(tp, o); err == nil {
			t.Errorf("Build(%+v) succeeded", o)
		}
	}
	if _, err := Build(nil, Options{}); err == nil {
		t.Error("Build(nil) succeeded")
	}
}

// TestFrontEnd sends IP frames from host1's FE NIC to the storage node
// through the RSW.
func TestFrontEnd(t *testing.T) {
	l := build(t, "laptop", Options{})
	src, dst := l.Host("host1:fe0"), l.Host("st1:fe0")
	for range 100 {
		src.Send(&wire.Packet{Kind: wire.KindIP, Len: 1514, IPVersion: 4, SrcIP: src.Port().Addr.Addr(), DstIP: dst.Port().Addr.Addr(),
			TTL: 64, Protocol: 17, SrcPort: 40000, DstPort: 9000})
	}
	l.Run(time(100))
	if src.TxPackets != 100 || dst.RxPackets != 100 || dst.RxBytes != 151400 {
		t.Errorf("sent %d, storage received %d packets (%d bytes), want 100 (151400)", src.TxPackets, dst.RxPackets, dst.RxBytes)
	}
	if got := telemetry.Sum(l.Samples(), "host_rx_packets_total", lbl("node", "st1:fe0")); got != 100 {
		t.Errorf("telemetry: %v packets at the storage node", got)
	}
}

// mixed runs a perf job and an incast-like job together on laptop.
func mixed(t *testing.T, opts Options) (*Lab, *Sampler) {
	t.Helper()
	l := build(t, "laptop", opts)
	s := l.Sample(SamplerSpec{Interval: 5 * clock.Microsecond, MaxPoints: 32})
	if _, err := l.Perf(PerfSpec{Op: "write", From: []string{"host1:gpu0"}, To: []string{"host4:gpu0"}, Iterations: 100, Mode: "metaroce", Paths: 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Incast("host3:gpu1", PerfSpec{From: []string{"host1:gpu1", "host2:gpu0", "host2:gpu1", "host4:gpu1"}, Duration: time(150), CC: "dcqcn"}); err != nil {
		t.Fatal(err)
	}
	if err := l.RunUntilIdle(clock.Second); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	return l, s
}

func TestDeterminism(t *testing.T) {
	a, sa := mixed(t, Options{Seed: 42})
	b, sb := mixed(t, Options{Seed: 42})
	if d := cmp.Diff(a.Samples(), b.Samples()); d != "" {
		t.Errorf("same seed, different samples (-a +b):\n%s", d)
	}
	if d := cmp.Diff(sa.Series(), sb.Series()); d != "" {
		t.Errorf("same seed, different series (-a +b):\n%s", d)
	}
	if a.Engine().Executed() != b.Engine().Executed() {
		t.Errorf("same seed, %d and %d events", a.Engine().Executed(), b.Engine().Executed())
	}
	c, _ := mixed(t, Options{Seed: 43})
	if cmp.Equal(a.Samples(), c.Samples()) {
		t.Error("seeds 42 and 43 gave identical samples (QPNs and PSNs are drawn from the seed)")
	}
}

// TestRawAndPayloadFree runs the same job on real frames (ICRC checked)
// and payload-free descriptors: the model must not care.
func TestRawAndPayloadFree(t *testing.T) {
	var res [2][]FlowResult
	for i, raw := range []bool{false, true} {
		l := build(t, "laptop", Options{Seed: 5, Raw: raw})
		j, err := l.Perf(PerfSpec{Op: "write", From: []string{"host1:gpu0", "host2:gpu1"}, To: []string{"host3:gpu0"}, Size: 32768, Iterations: 100})
		if err != nil {
			t.Fatal(err)
		}
		if err := l.RunUntilIdle(clock.Second); err != nil || j.Err() != nil {
			t.Fatal(err, j.Err())
		}
		s := l.Samples()
		if bad := telemetry.Sum(s, "nic_rx_bad_icrc_total"); bad != 0 {
			t.Errorf("raw %v: %v bad ICRCs", raw, bad)
		}
		if rx := telemetry.Sum(s, "qp_rx_data_bytes_total"); rx != 2*100*32768 {
			t.Errorf("raw %v: %v data bytes received, want %d", raw, rx, 2*100*32768)
		}
		res[i] = j.Results()
	}
	if d := cmp.Diff(res[0], res[1]); d != "" {
		t.Errorf("payload-free and raw runs differ (-free +raw):\n%s", d)
	}
}

// TestSamplerExtras records a telemetry sample by name and a custom probe.
func TestSamplerExtras(t *testing.T) {
	l := build(t, "laptop", Options{})
	var reads int
	s := l.Sample(SamplerSpec{Interval: time(10), Flows: true, Samples: []string{"nic_tx_bytes_total"},
		Probes: []Probe{{Name: "my_probe", Kind: telemetry.Gauge, Read: func() float64 { reads++; return 2 }}}})
	if _, err := l.Perf(PerfSpec{From: []string{"host1:gpu0"}, To: []string{"host2:gpu0"}, Iterations: 50}); err != nil {
		t.Fatal(err)
	}
	l.Run(time(100))
	s.Stop()
	s.Stop()
	tx, ok := s.Store().Get("nic_tx_bytes_total", lbl("node", "host1:gpu0"))
	if !ok || tx.Kind != telemetry.Counter || tx.Totals.Last != telemetry.Sum(l.Samples(), "nic_tx_bytes_total", lbl("node", "host1:gpu0")) {
		t.Errorf("nic_tx_bytes_total series %+v", tx.Totals)
	}
	p, _ := s.Store().Get("my_probe")
	if reads != 11 || p.Totals.Count != 11 || p.Totals.Mean() != 2 {
		t.Errorf("probe read %d times, series %+v", reads, p.Totals)
	}
	if len(s.Store().Find("switch_queue_depth_bytes")) != 0 {
		t.Error("queues recorded though only flows were asked for")
	}
	l.Run(time(200))
	if p, _ := s.Store().Get("my_probe"); p.Totals.Count != 11 {
		t.Errorf("stopped sampler kept reading: %d", p.Totals.Count)
	}
}
