package emu_test

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/wiretest"
)

// pauser is a toy model of a PFC-obeying sender: a received frame pauses
// it, and a timer transmits only if it is not paused. It records what
// happened at which fabric time.
type pauser struct {
	sched  clock.Scheduler
	paused bool
	log    []string
	at     []clock.Time
}

func (m *pauser) Receive(p *wire.Packet) {
	m.paused = true
	m.log = append(m.log, "rx")
	m.at = append(m.at, m.sched.Now())
}

func (m *pauser) tick() {
	if m.paused {
		m.log = append(m.log, "held")
	} else {
		m.log = append(m.log, "sent")
	}
	m.at = append(m.at, m.sched.Now())
}

// TestLateLoopReplaysInStampOrder: the loop is stuck (a posted function
// sleeps) while a frame arrives at wall 50 ms and a timer falls due at
// wall 100 ms; when the loop catches up at 200 ms, a PFC XOFF with
// ReplayPauses (any frame with ReplayAll) is delivered at its arrival's
// fabric time, before the timer — as it would have been had the loop
// been on time — not at the late turn's now after it. Frames the policy
// does not replay are delivered at now.
func TestLateLoopReplaysInStampOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		data   bool // a RoCE frame, not PFC
		replay emu.Replay
		// inject injects the frame at wall 50 ms after start.
		inject func(p *emu.MemPort, start time.Time, f []byte)
		want   []string
		wantRx clock.Time
		// lateBy is how late the frame was read: its stamp's fabric time
		// (the link has no delay) to the turn at 200 µs that read it.
		lateBy clock.Duration
	}{
		{
			name:   "pfc stamped on arrival",
			replay: emu.ReplayPauses,
			inject: func(p *emu.MemPort, _ time.Time, f []byte) { p.Inject(f) },
			want:   []string{"rx", "held"},
			wantRx: clock.Time(50 * clock.Microsecond),
			lateBy: 150 * clock.Microsecond,
		},
		{
			name:   "pfc, ReplayNone",
			inject: func(p *emu.MemPort, _ time.Time, f []byte) { p.Inject(f) },
			want:   []string{"sent", "rx"},
			wantRx: clock.Time(200 * clock.Microsecond),
			lateBy: 150 * clock.Microsecond,
		},
		{
			name:   "data, ReplayPauses",
			replay: emu.ReplayPauses,
			data:   true,
			inject: func(p *emu.MemPort, _ time.Time, f []byte) { p.Inject(f) },
			want:   []string{"sent", "rx"},
			wantRx: clock.Time(200 * clock.Microsecond),
			lateBy: 150 * clock.Microsecond,
		},
		{
			name:   "data, replay",
			data:   true,
			replay: emu.ReplayAll,
			inject: func(p *emu.MemPort, _ time.Time, f []byte) { p.Inject(f) },
			want:   []string{"rx", "held"},
			wantRx: clock.Time(50 * clock.Microsecond),
			lateBy: 150 * clock.Microsecond,
		},
		{
			name:   "stamped earlier than injected",
			replay: emu.ReplayPauses,
			inject: func(p *emu.MemPort, start time.Time, f []byte) {
				time.Sleep(100 * time.Millisecond) // now at 150 ms, past the timer
				p.InjectAt(start.Add(30*time.Millisecond), f)
			},
			want:   []string{"rx", "held"},
			wantRx: clock.Time(30 * clock.Microsecond),
			lateBy: 170 * clock.Microsecond,
		},
		{
			name:   "stamped after the timer",
			replay: emu.ReplayPauses,
			inject: func(p *emu.MemPort, start time.Time, f []byte) {
				time.Sleep(70 * time.Millisecond) // 120 ms
				p.Inject(f)
			},
			want:   []string{"sent", "rx"},
			wantRx: clock.Time(120 * clock.Microsecond),
			lateBy: 80 * clock.Microsecond,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := emu.NewMemWaiter()
				mp := w.NewPort()
				l, err := emu.New(emu.Options{Name: "n", Scale: 1000, Ports: []emu.Port{{Name: "p0", IO: mp}}, Waiter: w, Replay: tc.replay})
				if err != nil {
					t.Fatal(err)
				}
				m := &pauser{sched: l}
				l.Connect(0, m)
				l.AfterFunc(100*clock.Microsecond, m.tick) // wall 100 ms
				f := wiretest.PFC(t, peerMAC(0), 3, 0xFFFF)
				if tc.data {
					f = frame(t, 0, 1, 26, 100, 1)
				}
				l.Post(func() { time.Sleep(200 * time.Millisecond) })
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				start := time.Now()
				go func() { done <- l.Run(ctx) }()

				time.Sleep(50 * time.Millisecond)
				tc.inject(mp, start, f)
				time.Sleep(300 * time.Millisecond)
				var got []string
				var rxAt clock.Time
				var samples []telemetry.Sample
				if err := l.Do(ctx, func() {
					got = append(got, m.log...)
					for i, s := range m.log {
						if s == "rx" {
							rxAt = m.at[i]
						}
					}
					samples = telemetry.Gather(l)
				}); err != nil {
					t.Fatal(err)
				}
				cancel()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("order (-want +got):\n%s", diff)
				}
				if rxAt != tc.wantRx {
					t.Errorf("frame delivered at %v, want %v", rxAt, tc.wantRx)
				}
				if n := telemetry.Sum(samples, "emu_rx_unstamped_frames_total"); n != 0 {
					t.Errorf("%v unstamped frames", n)
				}
				late, by := telemetry.Sum(samples, "emu_rx_late_frames_total"), telemetry.Sum(samples, "emu_rx_late_seconds_total")
				if late != 1 || math.Abs(by-tc.lateBy.Seconds()) > 1e-12 {
					t.Errorf("late: %v frames by %v s, want 1 by %v", late, by, tc.lateBy.Seconds())
				}
			})
		})
	}
}

// plainIO hides MemPort's stamps: a PortIO that only reads.
type plainIO struct{ p *emu.MemPort }

func (p plainIO) ReadBatch(b [][]byte, l []int) (int, error) { return p.p.ReadBatch(b, l) }
func (p plainIO) WriteBatch(f [][]byte) (int, error)         { return p.p.WriteBatch(f) }

// TestUnstampedDeliveredAtNow: a PortIO without stamps gets the old
// behaviour, delivery at the turn's now, after the events due before it.
func TestUnstampedDeliveredAtNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := emu.NewMemWaiter()
		mp := w.NewPort()
		l, err := emu.New(emu.Options{Name: "n", Scale: 1000, Ports: []emu.Port{{Name: "p0", IO: plainIO{mp}}}, Waiter: w})
		if err != nil {
			t.Fatal(err)
		}
		m := &pauser{sched: l}
		l.Connect(0, m)
		l.AfterFunc(100*clock.Microsecond, m.tick)
		l.Post(func() { time.Sleep(200 * time.Millisecond) })
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- l.Run(ctx) }()
		time.Sleep(50 * time.Millisecond)
		mp.Inject(wiretest.PFC(t, peerMAC(0), 3, 0xFFFF))
		time.Sleep(300 * time.Millisecond)
		var got []string
		var unstamped float64
		l.Do(ctx, func() {
			got = append(got, m.log...)
			unstamped = telemetry.Sum(telemetry.Gather(l), "emu_rx_unstamped_frames_total")
		})
		cancel()
		<-done
		if diff := cmp.Diff([]string{"sent", "rx"}, got); diff != "" {
			t.Errorf("order (-want +got):\n%s", diff)
		}
		if unstamped != 1 {
			t.Errorf("unstamped frames = %v, want 1", unstamped)
		}
	})
}
