package dcqcn

import (
	"math"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint/cc"
)

// Phase is the rate-increase phase of a step.
type Phase uint8

// Rate-increase phases.
const (
	FastRecovery Phase = iota
	AdditiveIncrease
	HyperIncrease
)

func (p Phase) String() string {
	return [...]string{"fast-recovery", "additive", "hyper"}[p]
}

// Stats counts what a Sender did.
type Stats struct {
	CNPs      uint64    // CNPs received
	Cuts      uint64    // rate decreases applied
	Increases [3]uint64 // increase steps, by Phase
	TimerTicks,
	ByteTicks uint64 // increase steps triggered by the timer, by the byte counter
}

// Sender is the DCQCN reaction point of one flow. Rates are kept as
// float64 bits/s; Rate() rounds down.
type Sender struct {
	sched clock.Scheduler
	cfg   Config
	line  float64

	rc, rt float64
	alpha  float64

	// alpha timer
	alphaStarted bool // a CNP was ever seen (α is meaningful)
	alphaTimer   clock.Timer
	alphaTick    clock.Time // when α was last updated by the timer
	cnpInPeriod  bool

	// rate decrease
	cutEver    bool
	lastCut    clock.Time
	cutPending clock.Timer

	// rate increase
	recovering bool
	incTimer   clock.Timer
	t, bc      int
	bytes      int64

	stats Stats

	onAlphaFn, onIncFn, onCutFn func()
}

var _ cc.Sender = (*Sender)(nil)

// NewSender returns an idle reaction point at line rate.
func NewSender(sched clock.Scheduler, line clock.Rate, cfg Config) *Sender {
	s := &Sender{sched: sched, cfg: cfg, line: float64(line), rc: float64(line), rt: float64(line), alpha: cfg.AlphaInit}
	s.onAlphaFn, s.onIncFn, s.onCutFn = s.onAlphaTimer, s.onIncreaseTimer, s.onDeferredCut
	return s
}

// Rate returns the current rate Rc.
func (s *Sender) Rate() clock.Rate { return clock.Rate(s.rc) }

// TargetRate returns Rt.
func (s *Sender) TargetRate() clock.Rate { return clock.Rate(s.rt) }

// Alpha returns α.
func (s *Sender) Alpha() float64 { return s.alpha }

// Recovering reports whether the flow is below line rate with its timers running.
func (s *Sender) Recovering() bool { return s.recovering }

// Stats returns the counters.
func (s *Sender) Stats() Stats { return s.stats }

// Allowance returns cc.Unlimited: DCQCN is rate-only.
func (s *Sender) Allowance() int64 { return cc.Unlimited }

// OnSend advances the byte counter.
func (s *Sender) OnSend(n int) {
	if !s.recovering || s.cfg.ByteCounter <= 0 {
		return
	}
	s.bytes += int64(n)
	for s.recovering && s.bytes >= s.cfg.ByteCounter {
		s.bytes -= s.cfg.ByteCounter
		s.bc++
		s.stats.ByteTicks++
		s.increase()
	}
}

// OnFeedback reacts to CNPs and ignores every other kind.
func (s *Sender) OnFeedback(f cc.Feedback) {
	if f.Kind != cc.CNP {
		return
	}
	now := s.sched.Now()
	s.stats.CNPs++
	s.noteCNP(now)
	switch {
	case !s.cutEver || now.Sub(s.lastCut) >= s.cfg.RateDecreaseInterval:
		s.cut(now)
	case s.cutPending == nil:
		s.cutPending = s.sched.AfterFunc(s.lastCut.Add(s.cfg.RateDecreaseInterval).Sub(now), s.onCutFn)
	}
}

// noteCNP feeds the CNP to the alpha estimator, (re)starting its timer.
func (s *Sender) noteCNP(now clock.Time) {
	if !s.alphaStarted {
		// First CNP: α starts at alpha_init; this CNP does not also count
		// for the period (ns-3 cnp_received_mlx).
		s.alphaStarted = true
		s.alpha = s.cfg.AlphaInit
		s.startAlphaTimer(now)
		return
	}
	s.wakeAlpha(now)
	s.cnpInPeriod = true
}

// wakeAlpha restarts the alpha timer if it was stopped when the flow
// recovered, first applying the periods that passed without a CNP.
func (s *Sender) wakeAlpha(now clock.Time) {
	if s.alphaTimer != nil {
		return
	}
	k := int64(now.Sub(s.alphaTick) / s.cfg.AlphaTimer)
	s.alpha *= math.Pow(1-s.cfg.G, float64(k))
	s.startAlphaTimer(now)
}

func (s *Sender) startAlphaTimer(now clock.Time) {
	s.alphaTick = now
	s.cnpInPeriod = false
	s.alphaTimer = s.sched.AfterFunc(s.cfg.AlphaTimer, s.onAlphaFn)
}

func (s *Sender) onAlphaTimer() {
	s.alpha *= 1 - s.cfg.G
	if s.cnpInPeriod {
		s.alpha += s.cfg.G
	}
	s.cnpInPeriod = false
	s.alphaTick = s.sched.Now()
	if s.recovering {
		s.alphaTimer = s.sched.AfterFunc(s.cfg.AlphaTimer, s.onAlphaFn)
	} else {
		s.alphaTimer = nil
	}
}

func (s *Sender) onDeferredCut() {
	s.cutPending = nil
	s.cut(s.sched.Now())
}

// cut applies one rate decrease.
func (s *Sender) cut(now clock.Time) {
	s.stats.Cuts++
	if s.cfg.ClampTargetRate || !s.cutEver || s.t+s.bc > 0 || !s.recovering {
		s.rt = s.rc
	}
	s.rc = max(float64(s.cfg.MinRate), s.rc*(1-s.alpha/2))
	s.cutEver, s.lastCut = true, now
	s.t, s.bc, s.bytes = 0, 0, 0
	s.recovering = true
	if s.incTimer != nil {
		s.incTimer.Stop()
	}
	s.incTimer = s.sched.AfterFunc(s.cfg.IncreaseTimer, s.onIncFn)
	s.wakeAlpha(now)
}

func (s *Sender) onIncreaseTimer() {
	s.incTimer = nil
	s.t++
	s.stats.TimerTicks++
	s.increase()
	if s.recovering {
		s.incTimer = s.sched.AfterFunc(s.cfg.IncreaseTimer, s.onIncFn)
	}
}

// phase returns the phase of the step just counted in T or BC.
func (s *Sender) phase() Phase {
	f := s.cfg.FastRecoverySteps
	if s.cfg.ByteCounter <= 0 {
		switch {
		case s.t <= f:
			return FastRecovery
		case s.t == f+1:
			return AdditiveIncrease
		default:
			return HyperIncrease
		}
	}
	switch {
	case max(s.t, s.bc) <= f:
		return FastRecovery
	case min(s.t, s.bc) > f:
		return HyperIncrease
	default:
		return AdditiveIncrease
	}
}

// increase applies one rate-increase step.
func (s *Sender) increase() {
	ph := s.phase()
	s.stats.Increases[ph]++
	switch ph {
	case AdditiveIncrease:
		s.rt += float64(s.cfg.RateAI)
	case HyperIncrease:
		s.rt += float64(s.cfg.RateHAI)
	}
	s.rt = min(s.rt, s.line)
	s.rc = (s.rt + s.rc) / 2
	if s.rt >= s.line && s.line-s.rc < float64(s.cfg.RateAI) {
		s.recover()
	}
}

// recover returns the flow to idle at line rate. The alpha timer stops at
// its next tick (onAlphaTimer sees !recovering).
func (s *Sender) recover() {
	s.rc, s.rt = s.line, s.line
	s.recovering = false
	s.t, s.bc, s.bytes = 0, 0, 0
	if s.incTimer != nil {
		s.incTimer.Stop()
		s.incTimer = nil
	}
}

// Close cancels every timer.
func (s *Sender) Close() {
	for _, t := range []*clock.Timer{&s.alphaTimer, &s.incTimer, &s.cutPending} {
		if *t != nil {
			(*t).Stop()
			*t = nil
		}
	}
	s.recovering = false
}
