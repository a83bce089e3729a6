package inject_test

import (
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/faults"
	"github.com/rocelab/rocelab/faults/inject"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/switchmodel/fabric"
	"github.com/rocelab/rocelab/switchmodel/testbench"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/wire"
)

type lab struct {
	e        *sim.Engine
	f        *fabric.SimFabric
	inj      *inject.Injector
	sender   *testbench.Host
	receiver *testbench.Host
}

// newLab builds the shipped incast topology with the injector on every
// link direction (fabric.SimOptions.Wrap), a watchdog (detect 50 µs,
// recover 100 µs), and sender1 streaming priority 3 to the receiver.
func newLab(t *testing.T) *lab {
	t.Helper()
	topo, err := topologies.Builtin("incast")
	if err != nil {
		t.Fatal(err)
	}
	e := sim.New(1)
	inj := inject.New(e, e.Rand)
	f, err := fabric.BuildSim(e, topo, fabric.SimOptions{
		Wrap: inj.Wrap,
		Configure: func(_ *topologies.Node, c *switchmodel.Config) {
			c.PFC.Watchdog = switchmodel.WatchdogConfig{Detect: 50 * clock.Microsecond, Recover: 100 * clock.Microsecond}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	l := &lab{e: e, f: f, inj: inj}
	attach := func(node string) *testbench.Host {
		p := topo.Node(node).Port("gpu0")
		h := testbench.NewHost(node, e, p.Rate, nil)
		out, err := f.Attach(node, "gpu0", h)
		if err != nil {
			t.Fatal(err)
		}
		h.SetOut(out)
		return h
	}
	l.sender, l.receiver = attach("sender1"), attach("receiver")
	dst := topo.Node("receiver").Port("gpu0").Addr.Addr()
	src := topo.Node("sender1").Port("gpu0").Addr.Addr()
	l.sender.AddFlow(&testbench.Flow{Template: wire.Packet{
		Kind: wire.KindRoCE, Len: 1000, IPVersion: 4, SrcIP: src, DstIP: dst, DSCP: 26, ECN: 2,
		TTL: 64, Protocol: 17, SrcPort: 5000, DstPort: 4791, DestQP: 9,
	}, Count: -1, Priority: 3})
	return l
}

// TestStormThroughFabric: a schedule starts a PFC storm from the receiver
// NIC (XOFF quanta 65535 every 10 µs) at 5 µs for 300 µs. The switch port
// facing the receiver stops priority 3 and its watchdog fires at 55 µs
// (paused with packets queued for Detect = 50 µs); every storm frame is
// counted by the switch; the schedule removes the storm at 305 µs.
func TestStormThroughFabric(t *testing.T) {
	l := newLab(t)
	spec, err := faults.ParseSpec("storm prio 3 quanta 65535 interval 10us")
	if err != nil {
		t.Fatal(err)
	}
	sched := faults.Schedule{Events: []faults.Event{{
		At: 5 * clock.Microsecond, For: 300 * clock.Microsecond, Target: "receiver:gpu0", Spec: spec,
	}}}
	run := sched.Start(t.Context(), l.e, l.inj, func(err error) { t.Error(err) })
	sw := l.f.Switch("sw1")
	port := sw.Port(8) // p9, toward the receiver
	us := func(n int64) clock.Time { return clock.Time(n * int64(clock.Microsecond)) }
	var pausedAt30 bool
	var eventsAt54, eventsAt56 int64
	l.e.At(us(30), func() { pausedAt30 = port.Queue(3).Paused })
	l.e.At(us(54), func() { eventsAt54 = port.Queue(3).WatchdogEvents })
	l.e.At(us(57), func() { eventsAt56 = port.Queue(3).WatchdogEvents })
	l.e.RunUntil(us(400))
	q := port.Queue(3)
	samples := telemetry.Gather(l.inj)
	generated := telemetry.Sum(samples, "fault_packets_total", telemetry.Label{Name: "event", Value: "generated"})
	// While the storm is on (5–305 µs) frames leave at 5, 15, …, 295 µs:
	// 30 of them; they arrive 1 µs later.
	if !pausedAt30 || eventsAt54 != 0 || eventsAt56 != 1 || q.PFCRx != 30 || run.Applied != 1 || run.Cleared != 1 {
		t.Errorf("paused at 30 µs %v; watchdog events at 54/57 µs %d/%d; PFC received %d (generated %v); applied %d cleared %d",
			pausedAt30, eventsAt54, eventsAt56, q.PFCRx, generated, run.Applied, run.Cleared)
	}
	if left, _ := l.inj.List(t.Context()); len(left) != 0 {
		t.Errorf("faults left: %+v", left)
	}
	t.Logf("storm: %d PFC frames received, %d watchdog events, %d watchdog drops, receiver got %d",
		q.PFCRx, q.WatchdogEvents, sw.Drops("watchdog"), l.receiver.Packets)
}

// TestInjectorLossAndClear: "loss 100% match proto roce" on sender1 from
// 10 to 30 µs drops exactly the frames the sender hands its link in that
// window (±1 for the frame on the wire at each edge); the receiver's PSN
// sequence has one gap of exactly the dropped count; Clear takes the
// fault off.
func TestInjectorLossAndClear(t *testing.T) {
	l := newLab(t)
	us := func(n int64) clock.Time { return clock.Time(n * int64(clock.Microsecond)) }
	var sentAt10, sentAt30 int64
	var f faults.Fault
	l.e.At(us(10), func() {
		sentAt10 = l.sender.Sent
		s, _ := faults.ParseSpec("loss 100% match proto roce")
		placed, err := l.inj.Add(t.Context(), "sender1", s)
		if err != nil {
			t.Fatal(err)
		}
		id, err := faults.ParseID(placed[0].ID)
		if err != nil || len(placed) != 1 || !strings.HasPrefix(placed[0].Spec, "loss 100%") || len(placed[0].Targets) != 1 {
			t.Fatalf("placed %+v (%v)", placed, err)
		}
		f = l.inj.Chain("sender1:gpu0").Fault(id)
	})
	l.e.At(us(30), func() {
		sentAt30 = l.sender.Sent
		if n, err := l.inj.Clear(t.Context()); n != 1 || err != nil {
			t.Errorf("clear: %d, %v", n, err)
		}
	})
	var gaps, last int64 = 0, -1
	l.receiver.OnReceive = func(p *wire.Packet) {
		gaps += int64(p.PSN) - last - 1
		last = int64(p.PSN)
	}
	l.e.RunUntil(us(100))
	var dropped float64
	f.Collect(func(s telemetry.Sample) {
		if s.Label("event") == "dropped" {
			dropped = s.Value
		}
	})
	window := float64(sentAt30 - sentAt10)
	if dropped < window-1 || dropped > window+1 || float64(gaps) != dropped {
		t.Errorf("dropped %v, sent in window %v, PSN gaps %d", dropped, window, gaps)
	}
	if len(l.inj.Chain("sender1:gpu0").Faults()) != 0 {
		t.Error("fault still on the chain")
	}
	if _, err := l.inj.Add(t.Context(), "nosuch:p1", faults.Spec{Params: faults.BernoulliLoss{P: 0.1}}); err == nil {
		t.Error("unknown target accepted")
	}
	t.Logf("dropped %v frames between 10 and 30 µs", dropped)
}
