package emu_test

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/wire"
)

const (
	scale = 1000
	hop   = clock.Microsecond
)

func mac(i byte) [6]byte { return [6]byte{0x02, 0, 0, 0, 0, i} }

// portMAC and peerMAC of switch port i.
func portMAC(i int) [6]byte { return mac(byte(0x10 + i)) }
func peerMAC(i int) [6]byte { return mac(byte(0x20 + i)) }

// rig is a switch driven by a Loop over in-memory ports: port i leads to
// host 10.0.i.1 (route 10.0.i.0/24).
type rig struct {
	loop  *emu.Loop
	sw    *switchmodel.Switch
	ports []*emu.MemPort
}

func newRig(t *testing.T, cfg switchmodel.Config, rates ...clock.Rate) *rig {
	t.Helper()
	return newRigPeers(t, cfg, false, rates...)
}

// newRigPeers is newRig with every port's Port.PeerLoop set to peerLoop.
func newRigPeers(t *testing.T, cfg switchmodel.Config, peerLoop bool, rates ...clock.Rate) *rig {
	t.Helper()
	return newRigLead(t, cfg, peerLoop, -1, rates...)
}

// newRigLead is newRigPeers with the loop's Options.Lead set to lead
// (the rigs above keep exact times: no lead).
func newRigLead(t *testing.T, cfg switchmodel.Config, peerLoop bool, lead clock.Duration, rates ...clock.Rate) *rig {
	t.Helper()
	w := emu.NewMemWaiter()
	r := &rig{}
	var ports []emu.Port
	var specs []switchmodel.PortSpec
	for i, rate := range rates {
		mp := w.NewPort()
		r.ports = append(r.ports, mp)
		ports = append(ports, emu.Port{Name: "p" + string(rune('0'+i)), IO: mp, MAC: portMAC(i), PeerMAC: peerMAC(i), Delay: hop, PeerLoop: peerLoop})
		specs = append(specs, switchmodel.PortSpec{Rate: rate, Delay: hop})
	}
	l, err := emu.New(emu.Options{Name: "sw1", Scale: scale, Seed: 1, Ports: ports, Waiter: w, Recycle: true, Lead: lead})
	if err != nil {
		t.Fatal(err)
	}
	sw, err := switchmodel.New(switchmodel.Options{
		Name: "sw1", Config: cfg, Sched: l, Rand: l.Rand("switch"), Ports: specs,
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rates {
		sw.Attach(i, l.Connect(i, sw.Port(i)))
		if err := sw.AddRoute(netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, byte(i), 0}), 24), i); err != nil {
			t.Fatal(err)
		}
	}
	r.loop, r.sw = l, sw
	return r
}

// run starts the loop; the returned stop cancels it and checks Run's result.
func (r *rig) run(t *testing.T) (stop func()) {
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- r.loop.Run(ctx) }()
	return func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

// frame builds a RoCEv2 write from 10.0.src.1 to 10.0.dst.1.
func frame(t *testing.T, src, dst int, dscp uint8, payload int, psn uint32) []byte {
	t.Helper()
	p := wire.Packet{
		Kind:    wire.KindRoCE,
		SrcMAC:  peerMAC(src),
		DstMAC:  portMAC(src),
		SrcIP:   netip.AddrFrom4([4]byte{10, 0, byte(src), 1}),
		DstIP:   netip.AddrFrom4([4]byte{10, 0, byte(dst), 1}),
		DSCP:    dscp,
		ECN:     wire.ECNECT0,
		TTL:     64,
		SrcPort: 0xC000 + uint16(src),
		Opcode:  uint8(wire.OpWriteOnly),
		DestQP:  0x12,
		PSN:     psn,
		RKey:    7,
		DMALen:  uint32(payload),
	}
	f, err := wire.BuildFrame(&p, make([]byte, payload))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestForwardTiming: a frame injected at a known wall time leaves the
// other port after the switch's serialization and the link delay, both
// dilated by the scale, with MACs rewritten, TTL decremented and the
// frame still valid.
func TestForwardTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, switchmodel.DefaultConfig(), 100*clock.Gbps, 100*clock.Gbps)
		stop := r.run(t)
		defer stop()
		start := time.Now() // the bubble's clock does not move until everyone blocks

		time.Sleep(time.Millisecond) // fabric 1 µs
		in := frame(t, 0, 1, 26, 1024, 5)
		r.ports[0].Inject(in)
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()

		got := r.ports[1].Written()
		if len(got) != 1 {
			t.Fatalf("port 1 wrote %d frames, want 1", len(got))
		}
		ser := (100 * clock.Gbps).Serialize(wire.OnWireBytes(len(in)))
		fabric := clock.Microsecond + ser + hop
		want := start.Add(time.Duration(int64(fabric) * scale / 1000))
		if d := got[0].At.Sub(want); d < 0 || d > time.Nanosecond {
			t.Errorf("written at %v after start, want %v (fabric %v)", got[0].At.Sub(start), want.Sub(start), fabric)
		}
		var p wire.Packet
		if err := p.Decode(got[0].Frame); err != nil {
			t.Fatal(err)
		}
		if p.SrcMAC != portMAC(1) || p.DstMAC != peerMAC(1) || p.TTL != 63 || p.PSN != 5 {
			t.Errorf("forwarded %s: MACs %x→%x TTL %d", p.Summary(), p.SrcMAC, p.DstMAC, p.TTL)
		}
		if err := p.VerifyICRC(); err != nil {
			t.Errorf("ICRC: %v", err)
		}
		if !wire.IPv4ChecksumOK(got[0].Frame[wire.EthernetLen:]) {
			t.Error("IPv4 header checksum broken")
		}
		if w := r.ports[0].Written(); len(w) != 0 {
			t.Errorf("port 0 wrote %d frames", len(w))
		}
	})
}

// TestPFCSerialized: a lossless queue behind a slow port makes the switch
// pause its upstream; the PFC frame it builds (a descriptor without Raw)
// is serialized onto port 0 from the port's MAC, and decodes back.
func TestPFCSerialized(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := switchmodel.DefaultConfig()
		cfg.PFC.Alpha = 0
		cfg.PFC.XOffThreshold = 8 << 10
		cfg.ECN[3].Enabled = false
		r := newRig(t, cfg, 100*clock.Gbps, clock.Gbps)
		stop := r.run(t)
		defer stop()
		for i := range 40 {
			r.ports[0].Inject(frame(t, 0, 1, 26, 1024, uint32(i)))
		}
		time.Sleep(time.Second)
		synctest.Wait()

		var pfc []wire.Packet
		for _, w := range r.ports[0].Written() {
			var p wire.Packet
			if err := p.Decode(w.Frame); err != nil {
				t.Fatal(err)
			}
			pfc = append(pfc, p)
		}
		if len(pfc) < 2 {
			t.Fatalf("port 0 wrote %d frames, want an XOFF and an XON", len(pfc))
		}
		xoff, xon := pfc[0], pfc[len(pfc)-1]
		type pf struct {
			Kind        wire.Kind
			Dst, Src    [6]byte
			ClassEnable uint8
			Quanta3     uint16
		}
		sum := func(p wire.Packet) pf { return pf{p.Kind, p.DstMAC, p.SrcMAC, p.ClassEnable, p.Quanta[3]} }
		if diff := cmp.Diff(pf{wire.KindPFC, wire.PFCDstMAC, portMAC(0), 1 << 3, 0xFFFF}, sum(xoff)); diff != "" {
			t.Errorf("XOFF (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(pf{wire.KindPFC, wire.PFCDstMAC, portMAC(0), 1 << 3, 0}, sum(xon)); diff != "" {
			t.Errorf("XON (-want +got):\n%s", diff)
		}
		if n := len(r.ports[1].Written()); n != 40 {
			t.Errorf("port 1 wrote %d frames, want all 40 (lossless)", n)
		}
	})
}

// TestEventOrder: callbacks run in fabric-time order, each no earlier
// than its dilated wall time, ties in scheduling order.
func TestEventOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, switchmodel.DefaultConfig(), clock.Gbps)
		stop := r.run(t)
		defer stop()
		type ran struct {
			Name string
			At   clock.Time
			Wall time.Duration
		}
		var mu sync.Mutex
		var got []ran
		var start time.Time
		err := r.loop.Do(t.Context(), func() {
			start = r.loop.Start()
			base := r.loop.Now()
			for _, e := range []struct {
				name string
				d    clock.Duration
			}{{"c", 5 * clock.Microsecond}, {"a", clock.Microsecond}, {"b1", 3 * clock.Microsecond}, {"b2", 3 * clock.Microsecond}} {
				r.loop.AfterFunc(e.d, func() {
					mu.Lock()
					got = append(got, ran{e.name, r.loop.Now() - base, time.Since(start) - time.Duration(base)*scale/1000})
					mu.Unlock()
				})
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		us := clock.Time(clock.Microsecond)
		want := []ran{{"a", us, time.Millisecond}, {"b1", 3 * us, 3 * time.Millisecond}, {"b2", 3 * us, 3 * time.Millisecond}, {"c", 5 * us, 5 * time.Millisecond}}
		mu.Lock()
		defer mu.Unlock()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})
}

// TestPostAndStop: Post before Run runs at the first turn, Do runs on the
// loop and waits, and after Run returns Post refuses and Do fails.
func TestPostAndStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, switchmodel.DefaultConfig(), clock.Gbps)
		early := make(chan clock.Time, 1)
		r.loop.Post(func() { early <- r.loop.Now() })
		stop := r.run(t)
		if got := <-early; got != 0 {
			t.Errorf("early post ran at %v, want 0", got)
		}
		time.Sleep(2 * time.Millisecond)
		var now clock.Time
		if err := r.loop.Do(t.Context(), func() { now = r.loop.Now() }); err != nil {
			t.Fatal(err)
		}
		if now != clock.Time(2*clock.Microsecond) {
			t.Errorf("Do ran at fabric %v, want 2us", now)
		}
		// A timer far in the future must not keep Run from stopping.
		r.loop.Do(t.Context(), func() { r.loop.AfterFunc(clock.Duration(1<<62), func() { t.Error("fired") }) })
		stop()
		if r.loop.Post(func() {}) {
			t.Error("Post after Run returned true")
		}
		if err := r.loop.Do(t.Context(), func() {}); !errors.Is(err, emu.ErrStopped) {
			t.Errorf("Do after Run: %v, want ErrStopped", err)
		}
	})
}

// TestTelemetry: Gather reads the loop's and the switch's counters on the
// loop goroutine.
func TestTelemetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, switchmodel.DefaultConfig(), 100*clock.Gbps, 100*clock.Gbps)
		stop := r.run(t)
		defer stop()
		for i := range 3 {
			r.ports[0].Inject(frame(t, 0, 1, 26, 512, uint32(i)))
		}
		r.ports[0].Inject([]byte{1, 2, 3}) // too short to decode
		time.Sleep(time.Second)
		synctest.Wait()
		_, s, err := r.loop.Gather(t.Context(), r.sw)
		if err != nil {
			t.Fatal(err)
		}
		p0 := []telemetry.Label{{Name: "port", Value: "0"}}
		p1 := []telemetry.Label{{Name: "port", Value: "1"}}
		for _, c := range []struct {
			name  string
			match []telemetry.Label
			want  float64
		}{
			{"emu_rx_frames_total", p0, 3},
			{"emu_rx_malformed_total", p0, 1},
			{"emu_tx_frames_total", p1, 3},
			{"emu_tx_frames_total", p0, 0},
			{"emu_scale_factor", nil, scale},
			{"emu_dilation_factor", nil, scale},
		} {
			if got := telemetry.Sum(s, c.name, c.match...); got != c.want {
				t.Errorf("%s%v = %v, want %v", c.name, c.match, got, c.want)
			}
		}
		if telemetry.Sum(s, "emu_lagged_batches_total") == 0 || telemetry.Sum(s, "emu_events_total") == 0 {
			t.Error("no lagged batches or events counted")
		}
		var lag emu.Lag
		r.loop.Do(t.Context(), func() { lag = r.loop.Lag() })
		if lag.Wall > time.Nanosecond { // the bubble's timers are exact
			t.Errorf("lag %+v under a fake clock", lag)
		}
	})
}

// wallAfter is the wall-clock time d of fabric time after wall time at,
// on a loop started at start: at is mapped to fabric time (rounded down,
// as the loop does), d added, and the sum mapped back.
func wallAfter(start, at time.Time, d clock.Duration) time.Time {
	fabric := at.Sub(start).Nanoseconds()*int64(clock.Nanosecond)/scale + int64(d)
	return start.Add(time.Duration(fabric * scale / int64(clock.Nanosecond)))
}

// TestLinkDelayOnReceive: the link's delay is applied by the receiving
// end, from the frame's receive stamp: a frame the loop reads late, but
// within the delay, is delivered exactly a delay after it arrived, and a
// frame queued before Run (stamped before fabric time 0) is delivered at
// once, not lost.
func TestLinkDelayOnReceive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, switchmodel.DefaultConfig(), 100*clock.Gbps, 100*clock.Gbps)
		early := frame(t, 0, 1, 26, 1024, 1)
		r.ports[0].InjectAt(time.Now().Add(-time.Hour), early) // before Run
		stop := r.run(t)
		defer stop()
		start := time.Now()
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		if got := r.ports[1].Written(); len(got) != 1 {
			t.Fatalf("a frame queued before Run: port 1 wrote %d frames, want 1", len(got))
		}

		// Stamped 0.4 µs of fabric time before the loop reads it.
		in := frame(t, 0, 1, 26, 1024, 2)
		stamp := time.Now().Add(-400 * time.Microsecond)
		r.ports[0].InjectAt(stamp, in)
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		got := r.ports[1].Written()
		if len(got) != 1 {
			t.Fatalf("port 1 wrote %d frames, want 1", len(got))
		}
		ser := (100 * clock.Gbps).Serialize(wire.OnWireBytes(len(in)))
		want := wallAfter(start, stamp, hop+ser)
		if d := got[0].At.Sub(want); d < -time.Nanosecond || d > time.Nanosecond {
			t.Errorf("written %v after start, want %v: the delay was not counted from the stamp", got[0].At.Sub(start), want.Sub(start))
		}
	})
}

// TestQuietReads: after a read, frames that arrive within half the link's
// delay wait in the socket and are read together (one batch, not one per
// frame), yet each is delivered a delay after its own arrival.
func TestQuietReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, switchmodel.DefaultConfig(), 100*clock.Gbps, 100*clock.Gbps)
		stop := r.run(t)
		defer stop()
		start := time.Now()
		time.Sleep(time.Millisecond)
		var stamps []time.Time
		step := time.Duration(int64(hop)/int64(clock.Nanosecond)*scale) / 10 // 0.1 of the delay, wall
		for i := range 4 {
			stamps = append(stamps, time.Now())
			r.ports[0].Inject(frame(t, 0, 1, 26, 512, uint32(i)))
			time.Sleep(step)
		}
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		got := r.ports[1].Written()
		if len(got) != len(stamps) {
			t.Fatalf("port 1 wrote %d frames, want %d", len(got), len(stamps))
		}
		ser := (100 * clock.Gbps).Serialize(wire.OnWireBytes(len(frame(t, 0, 1, 26, 512, 0))))
		for i, w := range got {
			want := wallAfter(start, stamps[i], hop+ser)
			if d := w.At.Sub(want); d < -time.Nanosecond || d > time.Nanosecond {
				t.Errorf("frame %d written %v after start, want %v", i, w.At.Sub(start), want.Sub(start))
			}
		}
		_, s, err := r.loop.Gather(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if b := telemetry.Sum(s, "emu_rx_batches_total", telemetry.Label{Name: "port", Value: "0"}); b != 2 {
			t.Errorf("port 0 read in %v batches, want 2 (the first frame, then the three that came while the loop slept quietly)", b)
		}
	})
}

// TestOrigin: a loop given a lab-wide origin keys fabric time to it, not
// to its own start: fabric time stays 0 until an origin in the future and
// is already (now − origin)/k after one in the past.
func TestOrigin(t *testing.T) {
	for _, c := range []struct {
		name   string
		offset time.Duration // origin − start
	}{{"future", 5 * time.Millisecond}, {"past", -3 * time.Millisecond}} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				origin := start.Add(c.offset)
				l, err := emu.New(emu.Options{Name: "n", Scale: scale, Seed: 1, Waiter: emu.NewMemWaiter(), Origin: origin})
				if err != nil {
					t.Fatal(err)
				}
				fired := make(chan time.Time, 1)
				l.Post(func() { l.AfterFunc(0, func() { fired <- time.Now() }) })
				ctx, cancel := context.WithCancel(t.Context())
				errc := make(chan error, 1)
				go func() { errc <- l.Run(ctx) }()
				at := <-fired
				want := start
				if origin.After(start) {
					want = origin
				}
				if at.Sub(want) < 0 || at.Sub(want) > time.Millisecond {
					t.Errorf("an event at fabric 0 ran %v after the start, want at %v", at.Sub(start), want.Sub(start))
				}
				time.Sleep(time.Until(start.Add(10 * time.Millisecond)))
				var now clock.Time
				if err := l.Do(t.Context(), func() { now = l.Now() }); err != nil {
					t.Fatal(err)
				}
				wantNow := clock.Time((10*time.Millisecond - c.offset).Nanoseconds() * int64(clock.Nanosecond) / scale)
				if now != wantNow {
					t.Errorf("fabric time 10 ms after the start = %v, want %v", now, wantNow)
				}
				cancel()
				if err := <-errc; err != nil {
					t.Error(err)
				}
			})
		})
	}
}
