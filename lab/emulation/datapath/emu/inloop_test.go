package emu_test

import (
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/wire"
)

// chain is two switches on one Loop: sw1's port 0 and sw2's port 1 are
// edges (10.0.0.0/24 and 10.0.1.0/24), and sw1's port 1 is cabled to
// sw2's port 0, whose MemPorts are joined as a veth would join them.
type chain struct {
	loop           *emu.Loop
	sw1, sw2       *switchmodel.Switch
	in, out        *emu.MemPort // sw1 port 0, sw2 port 1
	cable1, cable2 *emu.MemPort // sw1 port 1, sw2 port 0
}

func newChain(t *testing.T, cfg switchmodel.Config, inLoop bool, outRate clock.Rate) *chain {
	t.Helper()
	w := emu.NewMemWaiter()
	c := &chain{}
	c.in, c.cable1, c.cable2, c.out = w.NewPort(), w.NewPort(), w.NewPort(), w.NewPort()
	emu.Join(c.cable1, c.cable2)
	ports := []emu.Port{
		{Name: "sw1p0", IO: c.in, MAC: portMAC(0), PeerMAC: peerMAC(0), Delay: hop},
		{Name: "sw1p1", IO: c.cable1, MAC: portMAC(1), PeerMAC: portMAC(2), Delay: hop},
		{Name: "sw2p0", IO: c.cable2, MAC: portMAC(2), PeerMAC: portMAC(1), Delay: hop},
		{Name: "sw2p1", IO: c.out, MAC: portMAC(3), PeerMAC: peerMAC(3), Delay: hop},
	}
	l, err := emu.New(emu.Options{Name: "sw1", Scale: scale, Seed: 1, Ports: ports, Waiter: w, Recycle: true, Lead: -1, InLoopLinks: inLoop})
	if err != nil {
		t.Fatal(err)
	}
	c.loop = l
	build := func(name string, first int, rates ...clock.Rate) *switchmodel.Switch {
		var specs []switchmodel.PortSpec
		for _, r := range rates {
			specs = append(specs, switchmodel.PortSpec{Rate: r, Delay: hop})
		}
		sw, err := switchmodel.New(switchmodel.Options{Name: name, Config: cfg, Sched: l, Rand: l.Rand(name), Ports: specs})
		if err != nil {
			t.Fatal(err)
		}
		for i := range rates {
			sw.Attach(i, l.Connect(first+i, sw.Port(i)))
			if err := sw.AddRoute(netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, byte(i), 0}), 24), i); err != nil {
				t.Fatal(err)
			}
		}
		return sw
	}
	c.sw1 = build("sw1", 0, 100*clock.Gbps, 100*clock.Gbps)
	c.sw2 = build("sw2", 2, 100*clock.Gbps, outRate)
	return c
}

// counter returns a sample's value from src, 0 if it has none.
func counter(src telemetry.Source, name string, labels ...telemetry.Label) float64 {
	var v float64
	src.Collect(func(s telemetry.Sample) {
		if s.Name != name {
			return
		}
		for _, want := range labels {
			if s.Label(want.Name) != want.Value {
				return
			}
		}
		v = s.Value
	})
	return v
}

// TestInLoopLinks: a link whose two ends are ports of one Loop carries
// its frames in memory (its sockets carry nothing) and delivers them at
// exactly the time the sockets would have on an on-time loop: sending
// time plus the link's delay. PFC frames the downstream switch builds
// cross it too, and pause the upstream.
func TestInLoopLinks(t *testing.T) {
	type result struct {
		at      []time.Duration // when sw2's edge wrote each frame, after the first
		frames  int
		cable   int // frames the cable's sockets carried
		inLoop  float64
		pauseRx float64 // PFC frames sw1's port 1 received
	}
	run := func(t *testing.T, inLoop bool, n int, outRate clock.Rate) (r result) {
		synctest.Test(t, func(t *testing.T) {
			cfg := switchmodel.DefaultConfig()
			cfg.PFC.Alpha = 0
			cfg.PFC.XOffThreshold = 8 << 10
			cfg.ECN[3].Enabled = false
			c := newChain(t, cfg, inLoop, outRate)
			stop := (&rig{loop: c.loop}).run(t)
			start := time.Now()
			time.Sleep(time.Millisecond) // fabric 1 µs
			for i := range n {
				c.in.Inject(frame(t, 0, 1, 26, 1024, uint32(i)))
			}
			time.Sleep(time.Second)
			synctest.Wait()
			stop()
			for _, w := range c.out.Written() {
				r.at = append(r.at, w.At.Sub(start))
				var p wire.Packet
				if err := p.Decode(w.Frame); err != nil {
					t.Fatal(err)
				}
				if p.SrcMAC != portMAC(3) || p.DstMAC != peerMAC(3) || p.TTL != 62 {
					t.Errorf("frame out: MACs %x→%x TTL %d, want %x→%x TTL 62", p.SrcMAC, p.DstMAC, p.TTL, portMAC(3), peerMAC(3))
				}
				if err := p.VerifyICRC(); err != nil {
					t.Errorf("ICRC: %v", err)
				}
			}
			r.frames = len(r.at)
			r.cable = len(c.cable1.Written()) + len(c.cable2.Written())
			r.inLoop = counter(c.loop, "emu_rx_inloop_frames_total", telemetry.Label{Name: "ifname", Value: "sw2p0"})
			r.pauseRx = counter(c.sw1, "switch_port_pfc_rx_frames_total", telemetry.Label{Name: "port", Value: "1"})
		})
		return r
	}
	t.Run("one frame, on time", func(t *testing.T) {
		sockets, mem := run(t, false, 1, 100*clock.Gbps), run(t, true, 1, 100*clock.Gbps)
		if sockets.frames != 1 || mem.frames != 1 {
			t.Fatalf("frames out: %d through the sockets, %d in memory, want 1", sockets.frames, mem.frames)
		}
		// 1 µs + hop + 2 serializations + hop, dilated.
		ser := (100 * clock.Gbps).Serialize(wire.OnWireBytes(len(frame(t, 0, 1, 26, 1024, 0))))
		want := time.Duration(int64(clock.Microsecond+2*hop+2*ser) * scale / int64(clock.Nanosecond))
		if mem.at[0] != want || sockets.at[0] != want {
			t.Errorf("written at %v in memory, %v through the sockets, want %v", mem.at[0], sockets.at[0], want)
		}
		if mem.cable != 0 || mem.inLoop != 1 {
			t.Errorf("in memory: the cable's sockets carried %d frames, %v counted in-loop; want 0 and 1", mem.cable, mem.inLoop)
		}
		if sockets.cable != 1 || sockets.inLoop != 0 {
			t.Errorf("through the sockets: the cable carried %d frames, %v counted in-loop; want 1 and 0", sockets.cable, sockets.inLoop)
		}
	})
	t.Run("PFC across the link", func(t *testing.T) {
		sockets, mem := run(t, false, 40, clock.Gbps), run(t, true, 40, clock.Gbps)
		if mem.frames != 40 || sockets.frames != 40 {
			t.Errorf("frames out: %d in memory, %d through the sockets; want 40 (lossless)", mem.frames, sockets.frames)
		}
		if mem.pauseRx < 2 || mem.pauseRx != sockets.pauseRx {
			t.Errorf("PFC frames sw1 received: %v in memory, %v through the sockets; want the same, at least XOFF and XON", mem.pauseRx, sockets.pauseRx)
		}
		if mem.cable != 0 {
			t.Errorf("in memory: the cable's sockets carried %d frames", mem.cable)
		}
		for i := range min(len(mem.at), len(sockets.at)) {
			if mem.at[i] != sockets.at[i] {
				t.Errorf("frame %d out at %v in memory, %v through the sockets", i, mem.at[i], sockets.at[i])
				break
			}
		}
	})
}
