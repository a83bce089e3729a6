package dcqcn

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/endpoint/cc"
)

// TestFluidFairShare closes the loop around N DCQCN senders sharing one
// 100G bottleneck with a toy marking queue: a fluid queue stepped every
// 1 µs, RED/ECN marking (Kmin 400 kB, Kmax 1600 kB, Pmax 0.2, docs/design.md's
// 100G values) drawn per packet, an NP that sends at most one CNP per flow
// per 50 µs, and feedback delayed by a 5 µs base RTT (marking on
// enqueue, so the queueing delay is not in the loop). Flow 0 starts alone;
// the others join at 2 ms. It checks that over [25 ms, 40 ms) the flows are
// within 25% of their fair share, the link is busy and the queue bounded. This is a sanity check of the control loop, not of the switch.
func TestFluidFairShare(t *testing.T) {
	const (
		n        = 4
		mtu      = 1024
		capacity = 100e9 / 8 // bytes per second
		dt       = clock.Microsecond
		join     = 2 * clock.Millisecond
		end      = 40 * clock.Millisecond
		measure  = 25 * clock.Millisecond // average rates over [measure, end)
		kmin     = 400e3
		kmax     = 1600e3
		pmax     = 0.2
	)
	e := sim.New(7)
	rng := e.Rand("marking")
	senders := make([]*Sender, n)
	for i := range senders {
		s, err := Algorithm().NewSender(cc.Env{Sched: e, LineRate: line, MTU: mtu})
		if err != nil {
			t.Fatal(err)
		}
		senders[i] = s.(*Sender)
		defer s.Close()
	}
	var (
		queue    float64
		maxQueue float64
		credit   [n]float64 // fractional bytes not yet sent as a packet
		lastCNP  [n]clock.Time
		measured [n]float64
		cnps     [n]int
	)
	for i := range lastCNP {
		lastCNP[i] = -clock.Time(clock.Second)
	}
	for now := clock.Time(0); now < clock.Time(end); now = now.Add(dt) {
		e.RunUntil(now)
		p := 0.0
		switch {
		case queue >= kmax:
			p = 1
		case queue > kmin:
			p = pmax * (queue - kmin) / (kmax - kmin)
		}
		const delay = 5 * clock.Microsecond
		arrived := 0.0
		for i, s := range senders {
			if i > 0 && now < clock.Time(join) {
				continue
			}
			credit[i] += float64(s.Rate()) / 8 * dt.Seconds()
			marked := false
			for credit[i] >= mtu {
				credit[i] -= mtu
				arrived += mtu
				s.OnSend(mtu)
				if now >= clock.Time(measure) {
					measured[i] += mtu
				}
				if p > 0 && rng.Float64() < p {
					marked = true
				}
			}
			if marked && now.Sub(lastCNP[i]) >= 50*clock.Microsecond {
				lastCNP[i] = now
				cnps[i]++
				e.AfterFunc(delay, func() { s.OnFeedback(cc.Feedback{Kind: cc.CNP}) })
			}
		}
		queue = max(0, queue+arrived-capacity*dt.Seconds())
		maxQueue = max(maxQueue, queue)
	}
	window := (end - measure).Seconds()
	fair := 100e9 / n
	total := 0.0
	for i := range measured {
		rate := measured[i] * 8 / window
		total += rate
		t.Logf("flow %d: %.2f Gb/s (fair %.2f), %d CNPs", i, rate/1e9, fair/1e9, cnps[i])
		if rate < 0.75*fair || rate > 1.25*fair {
			t.Errorf("flow %d: %.2f Gb/s, want within 25%% of the fair share %.2f Gb/s", i, rate/1e9, fair/1e9)
		}
	}
	t.Logf("total %.2f Gb/s, max queue %.0f kB", total/1e9, maxQueue/1e3)
	if total < 90e9 {
		t.Errorf("total %.2f Gb/s, want ≥ 90 Gb/s", total/1e9)
	}
	if maxQueue > 4*kmax {
		t.Errorf("max queue %.0f kB, want ≤ %.0f kB", maxQueue/1e3, 4*kmax/1e3)
	}
}
