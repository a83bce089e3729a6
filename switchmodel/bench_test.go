package switchmodel_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/wire"
)

// BenchmarkSwitchSim: two hosts at 100G send priority 3 through one
// switch model to a third port, on the sim engine; one op is one packet
// delivered. The allocations include the hosts' (one wire.Packet per
// packet sent) and the engine's.
func BenchmarkSwitchSim(b *testing.B) {
	e := sim.New(1)
	sw := newSwitch(b, e, "sw", switchmodel.DefaultConfig(), rates(3, g100), nil)
	h0 := attachHost(b, e, sw, 0, 0)
	h1 := attachHost(b, e, sw, 1, 1)
	rx := attachHost(b, e, sw, 2, 2)
	h0.AddFlow(flow(roce(0, 2, 26, 1), 3, int64(b.N/2)))
	h1.AddFlow(flow(roce(1, 2, 26, 2), 3, int64(b.N-b.N/2)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	e.Run()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "pkts/s")
	if rx.Packets != int64(b.N) {
		b.Fatalf("delivered %d of %d", rx.Packets, b.N)
	}
}

// manual is a minimal clock.Scheduler for the microbenchmark: callbacks
// in a slice, run in time order by drain. Its AfterFunc does not allocate.
type manual struct {
	now clock.Time
	q   []manualEv
}

type manualEv struct {
	at clock.Time
	f  func()
}

type nopTimer struct{}

func (nopTimer) Stop() bool { return false }

func (m *manual) Now() clock.Time { return m.now }

func (m *manual) AfterFunc(d clock.Duration, f func()) clock.Timer {
	m.q = append(m.q, manualEv{m.now.Add(max(d, 0)), f})
	return nopTimer{}
}

func (m *manual) drain() {
	for len(m.q) > 0 {
		i := 0
		for j := range m.q {
			if m.q[j].at < m.q[i].at {
				i = j
			}
		}
		ev := m.q[i]
		m.q = append(m.q[:i], m.q[i+1:]...)
		m.now = ev.at
		ev.f()
	}
}

type nopSink struct{ n int }

func (s *nopSink) Receive(*wire.Packet) { s.n++ }

// BenchmarkReceiveDequeue: the model's own hot path, one packet per op:
// Receive (classify, route, TTL, admission, WRED, enqueue), dequeue
// (DWRR/strict pick, release, XON check), serialization timer, hand-off.
func BenchmarkReceiveDequeue(b *testing.B) {
	m := &manual{}
	sw, err := switchmodel.New(switchmodel.Options{
		Name: "sw", Config: switchmodel.DefaultConfig(), Sched: m,
		Ports: []switchmodel.PortSpec{{Rate: g100}, {Rate: g100}},
	})
	if err != nil {
		b.Fatal(err)
	}
	sink := &nopSink{}
	sw.Attach(1, sink)
	if err := sw.AddRoute(netip.MustParsePrefix("10.0.0.0/24"), 1); err != nil {
		b.Fatal(err)
	}
	p := roce(0, 1, 26, 1)
	in := sw.Port(0)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		p.TTL = 64
		in.Receive(&p)
		m.drain()
	}
	if sink.n != b.N {
		b.Fatalf("delivered %d of %d", sink.n, b.N)
	}
}
