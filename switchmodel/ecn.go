package switchmodel

import (
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/wire"
)

// wred is one egress queue's marking profile, with thresholds already
// scaled to the port's rate.
type wred struct {
	enabled, atDequeue, dropNonECT bool
	kmin, kmax                     int64
	pmax                           float64
}

func newWRED(c ECNConfig, r clock.Rate) wred {
	w := wred{
		enabled:    c.Enabled,
		atDequeue:  c.AtDequeue,
		dropNonECT: c.DropNonECT,
		kmin:       c.Kmin,
		kmax:       c.Kmax,
		pmax:       c.Pmax,
	}
	if c.RefRate > 0 && r > 0 && r != c.RefRate {
		f := float64(r) / float64(c.RefRate)
		w.kmin = int64(float64(c.Kmin) * f)
		w.kmax = int64(float64(c.Kmax) * f)
	}
	return w
}

// MarkProbability returns the WRED marking probability at egress queue
// depth q (bytes): 0 up to Kmin, Pmax·(q−Kmin)/(Kmax−Kmin) up to Kmax, 1
// above Kmax.
func MarkProbability(c ECNConfig, q int64) float64 {
	w := newWRED(c, 0)
	return w.prob(q)
}

func (w *wred) prob(q int64) float64 {
	switch {
	case q <= w.kmin:
		return 0
	case q > w.kmax:
		return 1
	}
	return w.pmax * float64(q-w.kmin) / float64(w.kmax-w.kmin)
}

// wredHit flips the WRED coin for a packet seeing queue depth q.
func (s *Switch) wredHit(w *wred, q int64) bool {
	if q <= w.kmin {
		return false
	}
	if q > w.kmax {
		return true
	}
	return s.rng.Float64() < w.prob(q)
}

// markCEOn marks p Congestion Experienced if it is ECN-capable and reports
// true; a Not-ECT packet is left alone, and false is returned when the
// profile wants it dropped instead.
func (s *Switch) markCEOn(q *queue, p *wire.Packet) bool {
	switch p.ECN {
	case wire.ECNNotECT:
		return !q.ecn.dropNonECT
	case wire.ECNCE:
		return true
	}
	p.ECN = wire.ECNCE
	q.ecnMarks++
	if p.Raw != nil {
		p.WriteTOS()
	}
	return true
}
