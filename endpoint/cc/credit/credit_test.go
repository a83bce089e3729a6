package credit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/endpoint/cc"
)

const line = 100 * clock.Gbps

type grantAt struct {
	At    clock.Time
	Flow  uint32
	Bytes int64
}

// harness wires a Receiver to a log of grants and, when loop is set, to
// senders that send granted bytes at once, arriving rtt later.
type harness struct {
	t      *testing.T
	e      *sim.Engine
	r      *Receiver
	grants []grantAt
	loop   bool
	rtt    clock.Duration
	drop   func(n int, g cc.Grant) bool // drop the n-th grant (0-based)
	check  func(g cc.Grant)             // runs after each grant is logged
}

func newHarness(t *testing.T, params map[string]string) *harness {
	t.Helper()
	h := &harness{t: t, e: sim.New(1), rtt: 2 * clock.Microsecond}
	env := cc.Env{Sched: h.e, LineRate: line, MTU: 1000, Params: params, SendGrant: h.onGrant}
	r, err := Algorithm().NewReceiver(env)
	if err != nil {
		t.Fatal(err)
	}
	h.r = r.(*Receiver)
	t.Cleanup(h.r.Close)
	return h
}

func (h *harness) onGrant(g cc.Grant) {
	n := len(h.grants)
	h.grants = append(h.grants, grantAt{h.e.Now(), g.Flow, g.Bytes})
	if h.check != nil {
		h.check(g)
	}
	if !h.loop || h.drop != nil && h.drop(n, g) {
		return
	}
	h.e.AfterFunc(h.rtt, func() { h.r.OnData(g.Flow, int(g.Bytes), false) })
}

func (h *harness) granted() map[uint32]int64 {
	m := map[uint32]int64{}
	for _, g := range h.grants {
		m[g.Flow] += g.Bytes
	}
	return m
}

func TestGrantPacing(t *testing.T) {
	h := newHarness(t, map[string]string{"unscheduled": "0", "max_outstanding": "1MB", "rate_fraction": "0.5"})
	h.r.OnRequest(7, 100_000)
	h.e.RunUntil(clock.Time(time100us))
	if len(h.grants) != 100 {
		t.Fatalf("%d grants, want 100", len(h.grants))
	}
	// 1000 B at 50 Gb/s = 160 ns apart, starting at once.
	for i, g := range h.grants {
		want := grantAt{clock.Time(clock.Duration(i) * 160 * clock.Nanosecond), 7, 1000}
		if g != want {
			t.Fatalf("grant %d = %+v, want %+v", i, g, want)
		}
	}
	if got := h.r.Demand(7); got != 0 {
		t.Errorf("demand left %d", got)
	}
}

const time100us = 100 * clock.Microsecond

func TestRoundRobinFairAndCapped(t *testing.T) {
	const capBytes = 20_000
	h := newHarness(t, map[string]string{"unscheduled": "0", "max_outstanding": "20kB"})
	h.loop = true
	h.check = func(g cc.Grant) {
		if o, _ := h.r.Outstanding(g.Flow); o > capBytes {
			t.Fatalf("flow %d: %d bytes outstanding > cap %d", g.Flow, o, capBytes)
		}
	}
	for f := uint32(1); f <= 3; f++ {
		h.r.OnRequest(f, 10_000_000)
	}
	h.e.RunUntil(clock.Time(time100us))
	got := h.granted()
	// Paced at 95 Gb/s: 1000 B per 84.2105 ns, 1188 grants in 100 µs.
	total := got[1] + got[2] + got[3]
	if total < 1_180_000 || total > 1_190_000 {
		t.Errorf("granted %d bytes in 100us, want ≈ 95 Gb/s × 100 µs = 1.1875 MB", total)
	}
	for f := uint32(1); f <= 3; f++ {
		if d := got[f] - total/3; d < -1000 || d > 1000 {
			t.Errorf("flow %d granted %d, want %d ± one grant", f, got[f], total/3)
		}
	}
	// Round-robin order: 1, 2, 3, 1, 2, 3, …
	for i, g := range h.grants[:30] {
		if want := uint32(i%3 + 1); g.Flow != want {
			t.Fatalf("grant %d to flow %d, want %d", i, g.Flow, want)
		}
	}
}

func TestCapStopsGrantsUntilData(t *testing.T) {
	h := newHarness(t, map[string]string{"unscheduled": "0", "max_outstanding": "8000", "total_outstanding": "12000"})
	h.r.OnRequest(1, 50_000)
	h.r.OnRequest(2, 50_000)
	h.e.RunUntil(clock.Time(10 * clock.Microsecond))
	// The receiver-wide cap (12 kB) binds before the per-flow ones (8 kB).
	if diff := cmp.Diff(map[uint32]int64{1: 6000, 2: 6000}, h.granted()); diff != "" {
		t.Fatalf("granted (-want +got):\n%s", diff)
	}
	h.r.OnData(1, 3000, false)
	h.e.RunUntil(clock.Time(20 * clock.Microsecond))
	// 3000 B of room, three 1000 B grants continuing the round: 1, 2, 1.
	if diff := cmp.Diff(map[uint32]int64{1: 8000, 2: 7000}, h.granted()); diff != "" {
		t.Errorf("after 3000 B of flow 1 arrived (-want +got):\n%s", diff)
	}
	if o, total := h.r.Outstanding(1); o != 5000 || total != 12000 {
		t.Errorf("outstanding flow 1 %d total %d, want 5000 and 12000", o, total)
	}
}

func TestRegrantAfterTimeout(t *testing.T) {
	h := newHarness(t, map[string]string{"unscheduled": "0", "max_outstanding": "4000"})
	h.loop = true
	h.drop = func(n int, _ cc.Grant) bool { return n == 1 } // the second grant is lost
	h.r.OnRequest(1, 4000)
	h.e.RunUntil(clock.Time(time100us))
	st := h.r.Stats()
	if st.Grants != 4 || st.ArrivedBytes != 3000 || st.Regrants != 0 {
		t.Fatalf("before the timeout: %+v", st)
	}
	h.e.RunUntil(clock.Time(clock.Millisecond))
	st = h.r.Stats()
	if st.Grants != 5 || st.ArrivedBytes != 4000 || st.Regrants != 1 || st.RegrantedBytes != 1000 {
		t.Errorf("after the timeout: %+v", st)
	}
	last := h.grants[len(h.grants)-1]
	// Last data arrived at ≈ 2.3 µs; silence must last 200 µs, checked every 50 µs.
	if last.At < clock.Time(200*clock.Microsecond) || last.At > clock.Time(260*clock.Microsecond) {
		t.Errorf("re-grant at %v, want in [200us, 260us]", last.At)
	}
	if o, total := h.r.Outstanding(1); o != 0 || total != 0 {
		t.Errorf("outstanding %d/%d at the end", o, total)
	}
	if n := h.e.Pending(); n != 0 {
		t.Errorf("%d events pending once everything arrived", n)
	}
}

func TestUnscheduledWindow(t *testing.T) {
	params := map[string]string{"unscheduled": "5000", "max_outstanding": "1MB"}
	h := newHarness(t, params)
	s, err := Algorithm().NewSender(cc.Env{LineRate: line, MTU: 1000, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if s.Allowance() != 5000 || s.Rate() != line {
		t.Errorf("new sender: allowance %d rate %v", s.Allowance(), s.Rate())
	}
	h.r.OnRequest(1, 12_000) // 5000 unscheduled + 7000 granted
	h.r.OnRequest(2, 3000)   // all unscheduled, 2000 left
	h.e.RunUntil(clock.Time(10 * clock.Microsecond))
	h.r.OnRequest(2, 4000) // 2000 unscheduled left + 2000 granted
	h.r.OnData(3, 2000, false)
	h.r.OnRequest(3, 6000) // 2000 arrived ahead + 3000 more unscheduled + 1000 granted
	h.e.RunUntil(clock.Time(20 * clock.Microsecond))
	if diff := cmp.Diff(map[uint32]int64{1: 7000, 2: 2000, 3: 1000}, h.granted()); diff != "" {
		t.Errorf("granted (-want +got):\n%s", diff)
	}
	if o, _ := h.r.Outstanding(3); o != 4000 {
		t.Errorf("flow 3 outstanding %d, want 4000 (3000 unscheduled + 1000 granted)", o)
	}
}

func TestSRPT(t *testing.T) {
	h := newHarness(t, map[string]string{"unscheduled": "0", "max_outstanding": "1MB", "policy": "srpt"})
	h.r.OnRequest(1, 10_000)
	h.r.OnRequest(2, 3000)
	h.e.RunUntil(clock.Time(time100us))
	var order []uint32
	for _, g := range h.grants {
		order = append(order, g.Flow)
	}
	// The first grant went to flow 1 (alone at the time); then flow 2, the
	// shorter, is served to completion.
	want := []uint32{1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("grant order (-want +got):\n%s", diff)
	}
}

func TestSender(t *testing.T) {
	s := NewSender(line, Config{Unscheduled: 0})
	if s.Allowance() != 0 {
		t.Fatalf("allowance %d", s.Allowance())
	}
	s.OnFeedback(cc.Feedback{Kind: cc.Credit, Bytes: 3000})
	s.OnFeedback(cc.Feedback{Kind: cc.CNP, Bytes: 1 << 20})
	s.OnFeedback(cc.Feedback{Kind: cc.Ack, Bytes: 1 << 20})
	s.OnSend(1000)
	s.OnSend(1500)
	if s.Allowance() != 500 {
		t.Errorf("allowance %d, want 500", s.Allowance())
	}
}

func TestParams(t *testing.T) {
	env := cc.Env{Sched: sim.New(1), LineRate: line, MTU: 4096, SendGrant: func(cc.Grant) {}}
	c, err := ParseConfig(env)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{BDP: 125_000, Unscheduled: 125_000, MaxOutstanding: 125_000, GrantBytes: 4096,
		RateFraction: 0.95, Policy: RoundRobin, RegrantTimeout: 200 * clock.Microsecond}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	env.Params = map[string]string{"base_rtt": "4us"}
	if c, _ := ParseConfig(env); c.BDP != 50_000 || c.MaxOutstanding != 50_000 {
		t.Errorf("base_rtt 4us: %+v", c)
	}
	bad := []struct {
		params map[string]string
		want   string
	}{
		{map[string]string{"window": "1"}, "unknown parameter(s) [window]"},
		{map[string]string{"policy": "fifo"}, "must be one of [rr srpt]"},
		{map[string]string{"rate_fraction": "1.5"}, "must be in"},
		{map[string]string{"max_outstanding": "100"}, "must be in"},
		{map[string]string{"grant_bytes": "200kB"}, "exceeds max_outstanding"},
		{map[string]string{"total_outstanding": "1000"}, "below grant_bytes"},
		{map[string]string{"regrant_timeout": "-5us"}, "regrant_timeout"},
		{map[string]string{"base_rtt": "10"}, "needs a unit"},
	}
	for _, tc := range bad {
		env.Params = tc.params
		_, err := Algorithm().NewReceiver(env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want it to mention %q", tc.params, err, tc.want)
		}
		if _, err := Algorithm().NewSender(env); err == nil {
			t.Errorf("%v: NewSender accepted it", tc.params)
		}
	}
	env.Params = nil
	env.SendGrant = nil
	if _, err := Algorithm().NewReceiver(env); err == nil {
		t.Error("NewReceiver without SendGrant succeeded")
	}
}
