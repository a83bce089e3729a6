package switchmodel_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/switchmodel/testbench"
	"github.com/rocelab/rocelab/wire"
)

// oneHop sends each packet into port 0 of a 2-port switch whose port 1
// leads to a Counter, and returns the switch and the counter.
func oneHop(t *testing.T, cfg switchmodel.Config, opts func(*switchmodel.Options), pkts ...*wire.Packet) (*switchmodel.Switch, *testbench.Counter) {
	t.Helper()
	e := sim.New(1)
	o := switchmodel.Options{
		Name: "sw", Config: cfg, Sched: e, Rand: e.Rand("sw"),
		Ports: []switchmodel.PortSpec{{Rate: g100}, {Rate: g100}},
	}
	if opts != nil {
		opts(&o)
	}
	sw, err := switchmodel.New(o)
	if err != nil {
		t.Fatal(err)
	}
	c := &testbench.Counter{}
	sw.Attach(1, c)
	if err := sw.AddRoute(netip.MustParsePrefix("10.0.0.1/32"), 1); err != nil {
		t.Fatal(err)
	}
	for _, p := range pkts {
		e.At(0, func() { sw.Port(0).Receive(p) })
	}
	e.Run()
	return sw, c
}

func TestForwardingDrops(t *testing.T) {
	pkt := func(f func(p *wire.Packet)) *wire.Packet {
		p := roce(0, 1, 26, 1)
		f(&p)
		return &p
	}
	tests := []struct {
		name   string
		p      *wire.Packet
		reason string // "" = forwarded
		ttl    uint8  // TTL seen by the receiver
	}{
		{"forwarded, TTL decremented", pkt(func(*wire.Packet) {}), "", 63},
		{"TTL 1 expires", pkt(func(p *wire.Packet) { p.TTL = 1 }), "ttl", 0},
		{"TTL 0 expires", pkt(func(p *wire.Packet) { p.TTL = 0 }), "ttl", 0},
		{"descriptor without IP version keeps TTL", pkt(func(p *wire.Packet) { p.IPVersion, p.TTL = 0, 0 }), "", 0},
		{"no route", pkt(func(p *wire.Packet) { p.DstIP = netip.MustParseAddr("10.0.0.2") }), "no_route", 0},
		{"not IP", &wire.Packet{Kind: wire.KindOther, Len: 100}, "no_route", 0},
		{"oversize", pkt(func(p *wire.Packet) { p.Len = 9217 }), "oversize", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got *wire.Packet
			sw, c := oneHop(t, switchmodel.DefaultConfig(), nil, tc.p)
			if c.Packets == 1 {
				got = tc.p
			}
			if tc.reason == "" {
				if got == nil || got.TTL != tc.ttl || allDrops(sw) != 0 {
					t.Errorf("not forwarded as expected: received %d, drops %d", c.Packets, allDrops(sw))
				}
				return
			}
			if c.Packets != 0 || sw.Drops(tc.reason) != 1 || allDrops(sw) != 1 {
				t.Errorf("received %d, %s drops %d, all drops %d; want 0, 1, 1", c.Packets, tc.reason, sw.Drops(tc.reason), allDrops(sw))
			}
		})
	}
}

func TestClassification(t *testing.T) {
	tests := []struct {
		name     string
		trustPCP bool
		f        func(p *wire.Packet)
		tc       int
	}{
		{"RoCE DSCP 26", false, func(*wire.Packet) {}, 3},
		{"DSCP 48", false, func(p *wire.Packet) { p.DSCP = 48 }, 6},
		{"other DSCP", false, func(p *wire.Packet) { p.DSCP = 10 }, 0},
		{"CNP whatever its DSCP", false, func(p *wire.Packet) { p.Kind, p.DSCP = wire.KindCNP, 0 }, 6},
		{"tagged, DSCP wins", false, func(p *wire.Packet) { p.HasVLAN, p.PCP = true, 5 }, 3},
		{"tagged, PCP trusted", true, func(p *wire.Packet) { p.HasVLAN, p.PCP = true, 5 }, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := switchmodel.DefaultConfig()
			cfg.TrustPCP = tc.trustPCP
			p := roce(0, 1, 26, 1)
			tc.f(&p)
			sw, _ := oneHop(t, cfg, nil, &p)
			for q := range switchmodel.NumTC {
				want := int64(0)
				if q == tc.tc {
					want = 1
				}
				if got := sw.Port(1).Queue(q).EnqueuedPackets; got != want {
					t.Errorf("queue %d got %d packets, want %d", q, got, want)
				}
			}
			if got := sw.Port(0).PG(tc.tc).RxPackets; got != 1 {
				t.Errorf("ingress PG %d counted %d packets, want 1", tc.tc, got)
			}
		})
	}
}

// TestRawRewrite: the switch rewrites the bytes of packets that carry Raw
// (through wire's rewriters) so they decode to what it did to the
// descriptor, and leaves payload-free descriptors alone.
func TestRawRewrite(t *testing.T) {
	cfg := switchmodel.DefaultConfig()
	cfg.ECN[3].Kmin, cfg.ECN[3].Kmax = 0, 0 // mark everything queued behind something
	raw := roce(0, 1, 26, 1)
	frame, err := wire.BuildFrame(&raw, make([]byte, raw.Len))
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Decode(frame); err != nil {
		t.Fatal(err)
	}
	bare, bare2 := roce(0, 1, 26, 2), roce(0, 1, 26, 3)
	sw, c := oneHop(t, cfg, nil, &bare, &bare2, &raw)
	// All arrive at once. The first goes straight onto the wire; the
	// second sees an empty queue (0 ≤ Kmin): unmarked; the third, the Raw
	// one, sees 1000 B ahead (> Kmax): marked.
	if c.Packets != 3 || raw.ECN != 3 || bare.ECN != 2 || bare2.ECN != 2 || bare.Raw != nil {
		t.Errorf("received %d; ECN raw %d bare %d %d", c.Packets, raw.ECN, bare.ECN, bare2.ECN)
	}
	var got wire.Packet
	if err := got.Decode(raw.Raw); err != nil {
		t.Fatal(err)
	}
	if got.ECN != 3 || got.TTL != raw.TTL || got.TTL != 63 {
		t.Errorf("bytes say ECN %d TTL %d; descriptor ECN %d TTL %d", got.ECN, got.TTL, raw.ECN, raw.TTL)
	}
	if err := got.VerifyICRC(); err != nil {
		t.Errorf("ICRC after the rewrite: %v", err)
	}
	if got := sw.Port(1).Queue(3).ECNMarked; got != 1 {
		t.Errorf("ECN marks = %d, want 1", got)
	}
}

// TestTrimming: the 8:1 lossy incast of TestIncastLossyDrops with
// trimming on TC0: refused packets are cut to 64 B, re-marked DSCP 63 and
// sent on strict TC7, so every packet sent reaches the receiver, whole or
// trimmed, and nothing is dropped.
func TestTrimming(t *testing.T) {
	const n, count = 8, 4000
	cfg := switchmodel.DefaultConfig()
	cfg.Trim.Classes = switchmodel.TCs(0)
	e := sim.New(1)
	sw, hosts := incast(t, e, cfg, n, 0, count, nil)
	var trimmed, short int64
	hosts[n].OnReceive = func(p *wire.Packet) {
		if p.DSCP == 63 {
			trimmed++
			if p.Len == 64 {
				short++
			}
		}
	}
	e.Run()
	q := sw.Port(n).Queue(0)
	if q.Trimmed == 0 || trimmed != q.Trimmed || short != trimmed {
		t.Errorf("switch trimmed %d, receiver saw %d trimmed (%d of 64 B)", q.Trimmed, trimmed, short)
	}
	if hosts[n].Packets != n*count || allDrops(sw) != 0 {
		t.Errorf("received %d of %d, %d drops", hosts[n].Packets, n*count, allDrops(sw))
	}
	if u := sw.BufferUsed(); u != 0 {
		t.Errorf("buffer holds %d B after the run", u)
	}
	if got := sw.Port(n).Queue(7).TxPackets; got != trimmed {
		t.Errorf("TC7 sent %d, want the %d trimmed headers", got, trimmed)
	}
}

// TestXOffRefresh: a static 10 000 B threshold and a downstream that never
// lets go keep port 0's PG 3 congested. XOFF carries 1000 quanta (5.12 µs
// at 100G) and is refreshed every 2.56 µs, so the sender stays paused
// without a gap: over the 100 µs after the first XOFF it receives about
// 100/2.56 ≈ 39 frames and its pause never ends.
func TestXOffRefresh(t *testing.T) {
	cfg := switchmodel.DefaultConfig()
	cfg.PFC.Alpha, cfg.PFC.XOffThreshold, cfg.PFC.Quanta = 0, 10_000, 1000
	e := sim.New(1)
	sw := newSwitch(t, e, "sw", cfg, rates(2, g100), nil)
	h0 := attachHost(t, e, sw, 0, 0)
	attachHost(t, e, sw, 1, 1)
	e.At(0, func() { sw.Port(1).Receive(pfc(3, 0xFFFF)) })
	h0.AddFlow(flow(roce(0, 1, 26, 1), 3, 1000))
	e.RunUntil(clock.Time(110 * clock.Microsecond))
	if !h0.Paused(3) || h0.Pauses.Ended[3] != 0 {
		t.Errorf("sender paused now: %v; ended pauses total %v (want none)", h0.Paused(3), h0.Pauses.Ended[3])
	}
	if f := h0.Pauses.Frames[3]; f < 38 || f > 42 {
		t.Errorf("sender got %d pause frames, want ≈ 41 (first XOFF at ≈ 2 µs, then every 2.56 µs)", f)
	}
	g := sw.Port(0).PG(3)
	// The last frame sent may still be on the cable.
	if d := g.XOffFrames - h0.Pauses.Frames[3]; d < 0 || d > 1 || g.XOnFrames != 0 {
		t.Errorf("switch sent %d XOFF, %d XON; host got %d", g.XOffFrames, g.XOnFrames, h0.Pauses.Frames[3])
	}
}

// TestPause8023x: an 802.3x PAUSE stops every class of the port.
func TestPause8023x(t *testing.T) {
	e := sim.New(1)
	sw := newSwitch(t, e, "sw", switchmodel.DefaultConfig(), rates(2, g100), nil)
	h0 := attachHost(t, e, sw, 0, 0)
	h1 := attachHost(t, e, sw, 1, 1)
	pause := &wire.Packet{Kind: wire.KindPause, Len: 60}
	pause.Quanta[0] = 0xFFFF
	e.At(0, func() { sw.Port(1).Receive(pause) })
	h0.AddFlow(flow(roce(0, 1, 0, 1), 0, 10))
	e.RunUntil(clock.Time(100 * clock.Microsecond))
	if h1.Packets != 0 || !sw.Port(1).Queue(0).Paused {
		t.Errorf("lossy class not paused by 802.3x: %d received", h1.Packets)
	}
}

func TestNewRejects(t *testing.T) {
	e := sim.New(1)
	ports := []switchmodel.PortSpec{{Rate: g100}}
	tests := []struct {
		name string
		f    func(o *switchmodel.Options)
		want string
	}{
		{"no scheduler", func(o *switchmodel.Options) { o.Sched = nil }, "no scheduler"},
		{"no ports", func(o *switchmodel.Options) { o.Ports = nil }, "no ports"},
		{"too many ports", func(o *switchmodel.Options) {
			o.Ports = make([]switchmodel.PortSpec, switchmodel.MaxPorts+1)
			for i := range o.Ports {
				o.Ports[i].Rate = g100
			}
		}, "65536 ports, more than the 65535"},
		{"zero rate", func(o *switchmodel.Options) { o.Ports = []switchmodel.PortSpec{{}} }, "rate"},
		{"tiny buffer", func(o *switchmodel.Options) { o.Config.BufferBytes = 10_000 }, "no shared pool"},
		{"bad ECN", func(o *switchmodel.Options) { o.Config.ECN[3].Kmax = 1 }, "Kmin"},
		{"lossy trim only", func(o *switchmodel.Options) { o.Config.Trim.Classes = switchmodel.TCs(3) }, "lossy"},
		{"no threshold", func(o *switchmodel.Options) { o.Config.PFC.Alpha = 0 }, "threshold"},
	}
	for _, tc := range tests {
		o := switchmodel.Options{Name: "x", Config: switchmodel.DefaultConfig(), Sched: e, Ports: ports}
		tc.f(&o)
		if _, err := switchmodel.New(o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
}

func TestCollectLabels(t *testing.T) {
	p := roce(0, 1, 26, 1)
	p.TTL = 1
	q := roce(0, 1, 26, 1)
	sw, _ := oneHop(t, switchmodel.DefaultConfig(), nil, &p, &q)
	s := telemetry.Gather(sw)
	l := func(n, v string) telemetry.Label { return telemetry.Label{Name: n, Value: v} }
	if got := telemetry.Sum(s, "switch_drop_packets_total", l("node", "sw"), l("port", "0"), l("tc", "3"), l("reason", "ttl")); got != 1 {
		t.Errorf("ttl drop sample = %v, want 1", got)
	}
	if got := telemetry.Sum(s, "switch_queue_tx_packets_total", l("port", "1"), l("tc", "3")); got != 1 {
		t.Errorf("queue tx sample = %v, want 1", got)
	}
	if got := telemetry.Sum(s, "switch_pg_rx_packets_total", l("port", "0"), l("pg", "3")); got != 2 {
		t.Errorf("PG rx sample = %v, want 2", got)
	}
	if st := sw.Port(0).Stats(); st.Drops["ttl"] != 1 || st.RxPackets != 2 || sw.Port(1).Stats().TxPackets != 1 {
		t.Errorf("port stats: %+v / %+v", st, sw.Port(1).Stats())
	}
	for _, smp := range s {
		if smp.Label("node") != "sw" {
			t.Fatalf("sample %v without node label", smp)
		}
	}
}
