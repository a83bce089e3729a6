package dcqcn

import (
	"math"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/endpoint/cc"
)

const (
	us   = clock.Microsecond
	gbps = float64(clock.Gbps)
	line = 100 * clock.Gbps
)

// setup returns a DCQCN sender at 100G on a fresh simulator.
func setup(t *testing.T, params map[string]string) (*Sender, *sim.Engine) {
	t.Helper()
	e := sim.New(1)
	s, err := Algorithm().NewSender(cc.Env{Sched: e, LineRate: line, MTU: 1024, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s.(*Sender), e
}

func cnp(s *Sender) { s.OnFeedback(cc.Feedback{Kind: cc.CNP}) }

// near reports whether got is within 1e-9 relative of want.
func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

func checkRates(t *testing.T, s *Sender, when string, rc, rt float64) {
	t.Helper()
	if !near(s.rc, rc*gbps) || !near(s.rt, rt*gbps) {
		t.Errorf("%s: Rc, Rt = %.9gG, %.9gG; want %.9gG, %.9gG", when, s.rc/gbps, s.rt/gbps, rc, rt)
	}
}

func TestFirstCNPHalvesRate(t *testing.T) {
	s, _ := setup(t, nil)
	if s.Rate() != line || s.Allowance() != cc.Unlimited || s.Recovering() {
		t.Fatalf("idle sender: rate %v allowance %d recovering %v", s.Rate(), s.Allowance(), s.Recovering())
	}
	cnp(s)
	// First CNP: α = alpha_init = 1, Rt ← Rc = 100G, Rc ← 100G·(1 − 1/2) = 50G.
	checkRates(t, s, "after CNP", 50, 100)
	if s.Alpha() != 1 || s.Stats().Cuts != 1 || !s.Recovering() {
		t.Errorf("alpha %v cuts %d recovering %v", s.Alpha(), s.Stats().Cuts, s.Recovering())
	}
	// Other feedback kinds are ignored.
	s.OnFeedback(cc.Feedback{Kind: cc.Loss})
	s.OnFeedback(cc.Feedback{Kind: cc.Ack, Bytes: 1 << 20})
	checkRates(t, s, "after Loss/Ack", 50, 100)
}

func TestAlphaEvolution(t *testing.T) {
	s, e := setup(t, nil)
	g := 1.0 / 256
	cnp(s) // t = 0: α = 1, alpha timer ticks at 55, 110, …
	e.RunUntil(clock.Time(55 * us))
	// 55 µs, no CNP in [0,55): α = 255/256 = 0.99609375. The increase
	// timer also fired: fast recovery Rc = (100 + 50)/2 = 75G.
	if want := 1 - g; s.Alpha() != want {
		t.Errorf("α at 55us = %v, want %v", s.Alpha(), want)
	}
	checkRates(t, s, "55us", 75, 100)
	e.RunUntil(clock.Time(60 * us))
	cnp(s) // 60 ≥ 0 + 50: cut at once with α = 255/256.
	// Rt ← 75G; Rc ← 75G·(1 − 0.99609375/2) = 75·0.501953125 = 37.646484375G.
	checkRates(t, s, "cut at 60us", 37.646484375, 75)
	e.RunUntil(clock.Time(110 * us))
	// CNP in [55,110): α = (255/256)² + 1/256 = 65025/65536 + 256/65536 = 65281/65536.
	if want := 65281.0 / 65536; !near(s.Alpha(), want) {
		t.Errorf("α at 110us = %.17g, want %.17g", s.Alpha(), want)
	}
	e.RunUntil(clock.Time(165 * us))
	// No CNP in [110,165): α = 65281/65536 · 255/256.
	if want := 65281.0 / 65536 * 255 / 256; !near(s.Alpha(), want) {
		t.Errorf("α at 165us = %.17g, want %.17g", s.Alpha(), want)
	}
}

func TestRateDecreaseAtMostOncePerInterval(t *testing.T) {
	s, e := setup(t, nil)
	cnp(s) // t=0: Rc 100 → 50
	for _, at := range []clock.Duration{10 * us, 20 * us, 30 * us} {
		e.RunUntil(clock.Time(at))
		cnp(s)
	}
	e.RunUntil(clock.Time(50*us - 1))
	checkRates(t, s, "49.999us", 50, 100)
	if got := s.Stats().Cuts; got != 1 {
		t.Errorf("cuts before 50us = %d, want 1", got)
	}
	e.RunUntil(clock.Time(50 * us))
	// One deferred cut for the three CNPs, with α still 1 (alpha tick at 55).
	checkRates(t, s, "50us", 25, 50)
	if st := s.Stats(); st.Cuts != 2 || st.CNPs != 4 {
		t.Errorf("cuts %d CNPs %d, want 2 and 4", st.Cuts, st.CNPs)
	}
	e.RunUntil(clock.Time(101 * us))
	cnp(s) // 101 ≥ 50 + 50: immediate
	if got := s.Stats().Cuts; got != 3 {
		t.Errorf("cuts at 101us = %d, want 3", got)
	}
}

func TestMinRate(t *testing.T) {
	s, e := setup(t, map[string]string{"min_rate": "20G", "rate_decrease_interval": "1us"})
	for i := range 5 {
		e.RunUntil(clock.Time(clock.Duration(i) * 2 * us))
		cnp(s)
	}
	// 100 → 50 → 25 → 20 (floor) → 20 → 20
	checkRates(t, s, "after 5 cuts", 20, 20)
}

// twoCuts brings s to Rc = 25G, Rt = 50G at t = 50 µs (cuts at 0 and 50 µs,
// α = 1 both times); the increase timer then ticks at 105, 160, … µs.
func twoCuts(t *testing.T, s *Sender, e *sim.Engine) {
	t.Helper()
	cnp(s)
	e.RunUntil(clock.Time(50 * us))
	cnp(s)
	checkRates(t, s, "two cuts", 25, 50)
}

func TestTimerOnlyRecovery(t *testing.T) {
	s, e := setup(t, map[string]string{"byte_counter": "0"})
	twoCuts(t, s, e)
	s.OnSend(1 << 30) // byte counter off: no effect
	steps := []struct {
		at     clock.Duration
		rc, rt float64
		phase  Phase
	}{
		{105 * us, 37.5, 50, FastRecovery}, // (50+25)/2
		{160 * us, 43.75, 50, FastRecovery},
		{215 * us, 46.875, 50, FastRecovery},
		{270 * us, 48.4375, 50, FastRecovery},
		{325 * us, 49.21875, 50, FastRecovery}, // 5th and last FR step
		{380 * us, (50.1 + 49.21875) / 2, 50.1, AdditiveIncrease},
		{435 * us, (51.1 + (50.1+49.21875)/2) / 2, 51.1, HyperIncrease},
	}
	var want [3]uint64
	for _, st := range steps {
		e.RunUntil(clock.Time(st.at))
		want[st.phase]++
		checkRates(t, s, st.at.String(), st.rc, st.rt)
		if got := s.Stats().Increases; got != want {
			t.Errorf("%v: increases by phase %v, want %v", st.at, got, want)
		}
	}
}

func TestByteCounterAndTimerPhases(t *testing.T) {
	s, e := setup(t, map[string]string{"byte_counter": "1MB"})
	twoCuts(t, s, e)
	// Reference model of the rate steps.
	rc, rt := 25.0, 50.0
	step := func(ph Phase) {
		switch ph {
		case AdditiveIncrease:
			rt += 0.1
		case HyperIncrease:
			rt += 1
		}
		rc = (rt + rc) / 2
	}
	// 8 byte-counter expiries at 50 µs, before any timer expiry (T = 0):
	// BC = 1..5 fast recovery, BC = 6, 7, 8 additive (max > F, min = T = 0 ≤ F).
	for i := 1; i <= 8; i++ {
		s.OnSend(1_000_000)
		ph := FastRecovery
		if i > 5 {
			ph = AdditiveIncrease
		}
		step(ph)
		checkRates(t, s, "byte tick", rc, rt)
	}
	// Timer expiries T = 1..5: additive (min(T, 8) ≤ 5); T = 6: hyper.
	for i := 1; i <= 6; i++ {
		e.RunUntil(clock.Time(50*us + clock.Duration(i)*55*us))
		ph := AdditiveIncrease
		if i == 6 {
			ph = HyperIncrease
		}
		step(ph)
		checkRates(t, s, "timer tick", rc, rt)
	}
	st := s.Stats()
	if want := [3]uint64{5, 8, 1}; st.Increases != want || st.ByteTicks != 8 || st.TimerTicks != 6 {
		t.Errorf("stats %+v, want increases %v, 8 byte ticks, 6 timer ticks", st, want)
	}
	// A cut resets both counters: the next step is fast recovery again.
	cnp(s)
	s.OnSend(1_000_000)
	if got := s.Stats().Increases[FastRecovery]; got != 6 {
		t.Errorf("fast-recovery steps after a new cut = %d, want 6", got)
	}
}

func TestRecoveryToLineRateAndAlphaDecay(t *testing.T) {
	s, e := setup(t, nil)
	g := 1.0 / 256
	cnp(s)
	s.OnSend(10_000)
	// 50G gap halves per step; recovered when below R_AI = 20 Mb/s:
	// 50/2^9 = 0.098G < 0.1G at step 9 (495 µs). Only 10 kB were sent,
	// so BC = 0 throughout: 5 fast-recovery steps, then additive (min(T, BC)
	// = 0 never exceeds F, so no hyper step).
	e.RunUntil(clock.Time(495*us - 1))
	if !s.Recovering() {
		t.Fatalf("recovered before 495us: %+v", s.Stats())
	}
	e.RunUntil(clock.Time(550 * us))
	// The alpha timer ticked at 55…550 µs without CNPs, then stopped.
	if want := math.Pow(1-g, 10); !near(s.Alpha(), want) {
		t.Errorf("α after 10 quiet periods = %v, want (255/256)^10 = %v", s.Alpha(), want)
	}
	e.RunUntil(clock.Time(800 * us))
	if s.Recovering() || s.Rate() != line || s.TargetRate() != line {
		t.Errorf("at 800us: recovering %v rate %v target %v", s.Recovering(), s.Rate(), s.TargetRate())
	}
	if got, want := s.Stats().Increases, [3]uint64{5, 4, 0}; got != want {
		t.Errorf("increases %v, want %v", got, want)
	}
	// Idle: no timers left pending.
	if n := e.Pending(); n != 0 {
		t.Errorf("%d events pending for an idle flow", n)
	}
	// A CNP at 2 ms sees α decayed by all 36 whole periods since the first CNP.
	e.RunUntil(clock.Time(2000 * us))
	cnp(s)
	alpha := math.Pow(1-g, 36)
	if !near(s.Alpha(), alpha) {
		t.Errorf("α at 2ms = %v, want (255/256)^36 = %v", s.Alpha(), alpha)
	}
	checkRates(t, s, "cut at 2ms", 100*(1-alpha/2), 100)
}

func TestParams(t *testing.T) {
	env := cc.Env{Sched: sim.New(1), LineRate: line, MTU: 1024}
	c, err := ParseConfig(env)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{G: 1.0 / 256, AlphaInit: 1, AlphaTimer: 55 * us, RateDecreaseInterval: 50 * us,
		IncreaseTimer: 55 * us, ByteCounter: 10_000_000, FastRecoverySteps: 5,
		RateAI: 100 * clock.Mbps, RateHAI: clock.Gbps, MinRate: 100 * clock.Mbps, ClampTargetRate: true}
	if c != want {
		t.Errorf("defaults at 100G:\n got %+v\nwant %+v", c, want)
	}
	env.Params = map[string]string{"g": "1/16", "alpha_timer": "1.5ms", "rate_ai": "40Mbps",
		"byte_counter": "64KiB", "fast_recovery_steps": "1", "min_rate": "1G"}
	c, err = ParseConfig(env)
	if err != nil {
		t.Fatal(err)
	}
	if c.G != 1.0/16 || c.AlphaTimer != 1500*us || c.RateAI != 40*clock.Mbps || c.ByteCounter != 65536 ||
		c.FastRecoverySteps != 1 || c.MinRate != clock.Gbps {
		t.Errorf("parsed %+v", c)
	}
	bad := []struct {
		params map[string]string
		want   string
	}{
		{map[string]string{"gain": "0.1"}, "unknown parameter(s) [gain]"},
		{map[string]string{"g": "abc"}, `g="abc"`},
		{map[string]string{"g": "2"}, "must be in"},
		{map[string]string{"alpha_timer": "55"}, "needs a unit"},
		{map[string]string{"increase_timer": "0us"}, "must be positive"},
		{map[string]string{"rate_ai": "fast"}, "rate_ai"},
		{map[string]string{"rate_hai": "200G"}, "must be in"},
		{map[string]string{"g": "0"}, "must be in"},
		{map[string]string{"byte_counter": "-1"}, "byte_counter"},
		{map[string]string{"byte_counter": "10XB"}, `unknown unit "XB"`},
		{map[string]string{"fast_recovery_steps": "five"}, "not an integer"},
	}
	for _, tc := range bad {
		env.Params = tc.params
		_, err := Algorithm().NewSender(env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want it to mention %q", tc.params, err, tc.want)
		}
	}
	if r, err := Algorithm().NewReceiver(cc.Env{LineRate: line}); r != nil || err != nil {
		t.Errorf("NewReceiver = %v, %v; want nil, nil", r, err)
	}
}

// TestClampTargetRate: with clamp_target_rate 0 (ns-3 CLAMP_TARGET_RATE 0)
// a cut that follows a cut with no increase step in between leaves Rt
// where it was; with the default (1) every cut sets Rt ← Rc. Once an
// increase step happened, both clamp.
func TestClampTargetRate(t *testing.T) {
	for _, tc := range []struct {
		clamp             string
		rtSecond, rtThird float64
	}{
		{"1", 50, 37.5},
		{"0", 100, 62.5},
	} {
		t.Run("clamp="+tc.clamp, func(t *testing.T) {
			s, e := setup(t, map[string]string{"clamp_target_rate": tc.clamp, "increase_timer": "60us", "alpha_timer": "1ms"})
			cnp(s) // t=0: α=1, Rt ← 100, Rc ← 50
			checkRates(t, s, "first cut", 50, 100)
			e.RunUntil(clock.Time(50 * us))
			cnp(s) // no increase yet: Rc ← 25
			checkRates(t, s, "second cut", 25, tc.rtSecond)
			e.RunUntil(clock.Time(110 * us)) // one fast-recovery step at 110 µs: Rc ← (Rt + 25)/2
			cnp(s)
			rc := (tc.rtSecond + 25) / 2
			checkRates(t, s, "third cut", rc/2, rc)
			if rc != tc.rtThird {
				t.Fatalf("table: rtThird %v, computed %v", tc.rtThird, rc)
			}
		})
	}
}
