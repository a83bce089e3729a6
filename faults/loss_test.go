package faults

import (
	"math"
	"testing"

	"github.com/rocelab/rocelab/wire"
)

// TestBernoulliLoss: N = 1,000,000 packets at p = 1 %: the dropped count
// is binomial, mean Np = 10,000, σ = √(Np(1−p)) ≈ 99.5; it must be within
// 3σ ≈ 298 of the mean.
func TestBernoulliLoss(t *testing.T) {
	const n, p = 1_000_000, 0.01
	var delivered int64
	l := NewLoss(BernoulliLoss{P: p}, rng(1))
	l.SetNext(sinkFunc(func(*wire.Packet) { delivered++ }))
	pkt := roce(0)
	for range n {
		l.Receive(pkt)
	}
	c := l.Stats()
	sigma := math.Sqrt(n * p * (1 - p))
	if d := math.Abs(float64(c.Dropped) - n*p); d > 3*sigma {
		t.Errorf("dropped %d, want %v ± 3σ (%.0f)", c.Dropped, n*p, 3*sigma)
	}
	if c.Matched != n || delivered+c.Dropped != n {
		t.Errorf("matched %d, delivered %d + dropped %d, want %d", c.Matched, delivered, c.Dropped, n)
	}
	t.Logf("dropped %d of %d (expected %.0f, σ %.1f)", c.Dropped, n, n*p, sigma)
}

// runGE sends n packets through a Gilbert–Elliott model and returns the
// loss fraction and the mean length of runs of consecutive losses.
func runGE(g GilbertElliott, n int, seed uint64) (loss, burst float64) {
	l := NewGilbertElliott(g, rng(seed))
	var delivered int
	l.SetNext(sinkFunc(func(*wire.Packet) { delivered++ }))
	var lost, bursts, prevDelivered int
	inBurst := false
	pkt := roce(0)
	for range n {
		prevDelivered = delivered
		l.Receive(pkt)
		if delivered == prevDelivered {
			lost++
			if !inBurst {
				bursts++
			}
			inBurst = true
		} else {
			inBurst = false
		}
	}
	return float64(lost) / float64(n), float64(lost) / float64(bursts)
}

type sinkFunc func(*wire.Packet)

func (f sinkFunc) Receive(p *wire.Packet) { f(p) }

// TestGilbertElliott: "loss 1% burst 4" is Gilbert's simple model with
// r = 1/4 and p = r·0.01/0.99; over 2,000,000 packets (≈ 5,000 bursts,
// geometric with variance (1−r)/r² = 12, so the mean burst's σ ≈ 0.05)
// the mean burst must be 4 within 5 % and the loss 1 % within 10 %. A
// general model (1−h = 80 %, 1−k = 0.1 %) must match the stationary loss
// (1−k)·r/(p+r) + (1−h)·p/(p+r) within 5 %.
func TestGilbertElliott(t *testing.T) {
	s, err := ParseSpec("loss 1% burst 4")
	if err != nil {
		t.Fatal(err)
	}
	g := s.Params.(GilbertElliott)
	loss, burst := runGE(g, 2_000_000, 7)
	if math.Abs(burst-4)/4 > 0.05 || math.Abs(loss-0.01)/0.01 > 0.10 {
		t.Errorf("simple Gilbert: loss %.4f%% (want 1%%), mean burst %.3f (want 4)", loss*100, burst)
	}
	t.Logf("simple Gilbert p=%.5f r=%.2f: loss %.4f%%, mean burst %.3f", g.P, g.R, loss*100, burst)

	ge := GilbertElliott{P: 0.01, R: 0.3, LossBad: 0.8, LossGood: 0.001}
	want := ge.Rate()
	loss, _ = runGE(ge, 2_000_000, 8)
	if math.Abs(loss-want)/want > 0.05 {
		t.Errorf("GE: loss %.5f, want %.5f", loss, want)
	}
	t.Logf("GE p=1%% r=30%% 1-h=80%% 1-k=0.1%%: loss %.4f%% (formula %.4f%%)", loss*100, want*100)
}

// TestLossDeterminism: the same seed drops the same packets, another seed
// different ones.
func TestLossDeterminism(t *testing.T) {
	run := func(seed uint64) []uint32 {
		var rec recorder
		l := NewGilbertElliott(BurstLoss(0.05, 3), rng(seed))
		l.SetNext(&rec)
		for i := range 20000 {
			l.Receive(roce(uint32(i)))
		}
		var psns []uint32
		for _, a := range rec.got {
			psns = append(psns, a.psn)
		}
		return psns
	}
	a, b, c := run(3), run(3), run(4)
	if len(a) != len(b) {
		t.Fatal("same seed, different counts")
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed differs at %d", i)
		}
	}
	same := len(a) == len(c)
	for i := 0; same && i < len(a); i++ {
		same = a[i] == c[i]
	}
	if same {
		t.Error("different seeds gave the same losses")
	}
}

// TestMatch: a loss of 100 % matched on DSCP 48 drops only those.
func TestMatch(t *testing.T) {
	s, err := ParseSpec("loss 100% match dscp 48 proto roce,cnp")
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.New(Env{Rand: rng(1)})
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	st := f.(Stage)
	st.SetNext(&rec)
	a, b, c := roce(1), roce(2), roce(3)
	b.DSCP = 48
	c.DSCP, c.Kind = 48, wire.KindIP
	for _, p := range []*wire.Packet{a, b, c} {
		st.Receive(p)
	}
	if len(rec.got) != 2 || rec.got[0].psn != 1 || rec.got[1].psn != 3 {
		t.Errorf("got %+v, want PSNs 1 and 3", rec.got)
	}
}
