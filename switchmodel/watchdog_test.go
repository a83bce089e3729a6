package switchmodel_test

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/switchmodel"
)

// TestWatchdogStorm: the NIC behind port 1 sends XOFF on priority 3 every
// 10 µs from 5 µs on (a PFC storm) while host 0 streams priority 3 to it.
// Detect = 50 µs, Recover = 100 µs:
//
//	 5 µs  paused (queue fills)          55 µs  event 1, storm mode to 155
//	155 µs XOFF at 155 still ignored     165 µs paused again
//	215 µs event 2, storm mode to 315    325 µs paused again
//	375 µs event 3                        run ends at 400 µs
//
// so 3 events and 2 restores. With action drop, host 1 gets frames only
// before the first pause and in the two 10 µs gaps between the end of a
// storm window and the next XOFF (155–165, 315–325 µs): frames reach the
// switch from 1.08 µs on, one per 81.92 ns, so (5 − 1.08)/0.08192 ≈ 48 and
// 10/0.08192 ≈ 122 per gap, ≈ 292 in all; every other frame is dropped and
// counted (reason watchdog). With action ignore, the queue drains during
// both storm windows and nothing is dropped.
func TestWatchdogStorm(t *testing.T) {
	for _, action := range []switchmodel.WatchdogAction{switchmodel.WatchdogDrop, switchmodel.WatchdogIgnore} {
		t.Run(action.String(), func(t *testing.T) {
			cfg := switchmodel.DefaultConfig()
			cfg.PFC.Watchdog = switchmodel.WatchdogConfig{
				Detect:  50 * clock.Microsecond,
				Recover: 100 * clock.Microsecond,
				Action:  action,
			}
			e := sim.New(1)
			sw := newSwitch(t, e, "sw", cfg, rates(2, g100), nil)
			h0 := attachHost(t, e, sw, 0, 0)
			h1 := attachHost(t, e, sw, 1, 1)
			h0.AddFlow(flow(roce(0, 1, 26, 1), 3, -1))
			us := func(n int64) clock.Time { return clock.Time(n * int64(clock.Microsecond)) }
			for at := int64(5); at < 400; at += 10 {
				e.At(us(at), func() { sw.Port(1).Receive(pfc(3, 0xFFFF)) })
			}
			events := func() int64 { return sw.Port(1).Queue(3).WatchdogEvents }
			for _, c := range []struct {
				at   int64
				want int64
			}{{54, 0}, {56, 1}, {214, 1}, {216, 2}, {374, 2}, {376, 3}} {
				e.At(us(c.at), func() {
					if got := events(); got != c.want {
						t.Errorf("at %d µs: %d watchdog events, want %d", c.at, got, c.want)
					}
				})
			}
			e.RunUntil(us(400))
			q := sw.Port(1).Queue(3)
			if q.WatchdogEvents != 3 || q.WatchdogRestores != 2 {
				t.Errorf("events %d, restores %d; want 3, 2", q.WatchdogEvents, q.WatchdogRestores)
			}
			if q.PFCIgnored == 0 {
				t.Error("no pause frame ignored during storm mode")
			}
			drops := sw.Drops("watchdog")
			switch action {
			case switchmodel.WatchdogDrop:
				if h1.Packets < 285 || h1.Packets > 300 || drops == 0 {
					t.Errorf("drop: host 1 got %d frames (want ≈ 292), %d watchdog drops (want > 0)", h1.Packets, drops)
				}
			case switchmodel.WatchdogIgnore:
				// Two 100 µs windows at 100G: ≥ 2 × 1220 frames.
				if h1.Packets < 2400 || drops != 0 {
					t.Errorf("ignore: host 1 got %d frames (want ≥ 2400), %d drops (want 0)", h1.Packets, drops)
				}
			}
			t.Logf("host 1 received %d, watchdog drops %d", h1.Packets, drops)
		})
	}
}
