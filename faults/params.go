package faults

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
)

// Params are one model's parameters: what a Spec carries. Every model
// type (BernoulliLoss, GilbertElliott, Corruption, Delay, Duplication,
// RateLimit, Flap, PFCStorm, ECNOff, PFCOff, DSCPMap, Traffic) is one.
type Params interface {
	// Kind is the model.
	Kind() Kind
	// String gives the parameters in Spec syntax; ParseSpec reads it back.
	String() string
	// New builds the fault for a link direction described by env.
	New(env Env) (Fault, error)
}

// Env is what a fault needs from the link direction it is placed on.
type Env struct {
	// Sched gives time and callbacks; required by delay, rate, flap and
	// the generators.
	Sched clock.Scheduler
	// Rand is the fault's own random stream; required by loss,
	// corruption, jitter, reordering and duplication.
	Rand *rand.Rand
	// Rate is the link's line rate: the default rate of traffic
	// generators and the rate pause times are computed at.
	Rate clock.Rate
	// SrcMAC and SrcIP are the sending port's addresses, the source of
	// generated frames (SrcIP is the default src of traffic).
	SrcMAC [6]byte
	SrcIP  netip.Addr
	// Raw makes generators build frame bytes too (emulation).
	Raw bool
}

func (e Env) needRand(k Kind) error {
	if e.Rand == nil {
		return fmt.Errorf("%s: no random source", k)
	}
	return nil
}

func (e Env) needSched(k Kind) error {
	if e.Sched == nil {
		return fmt.Errorf("%s: no scheduler", k)
	}
	return nil
}

// prob is one of a model's probabilities, by the name its errors use.
type prob struct {
	name string
	v    float64
}

// randomly checks what a random model needs: every probability in
// [0, 1], and a random stream in e.
func (e Env) randomly(k Kind, probs ...prob) error {
	for _, p := range probs {
		if err := checkProb(k, p.name, p.v); err != nil {
			return err
		}
	}
	return e.needRand(k)
}

func checkProb(k Kind, name string, p float64) error {
	if !(p >= 0 && p <= 1) {
		return fmt.Errorf("%s: %s %v out of [0, 1]", k, name, p)
	}
	return nil
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Kind returns KindLoss.
func (BernoulliLoss) Kind() Kind { return KindLoss }

func (m BernoulliLoss) String() string { return "loss " + pct(m.P) }

// New builds a Loss stage.
func (m BernoulliLoss) New(env Env) (Fault, error) {
	if err := env.randomly(KindLoss, prob{"probability", m.P}); err != nil {
		return nil, err
	}
	return NewLoss(m, env.Rand), nil
}

// Kind returns KindLoss.
func (GilbertElliott) Kind() Kind { return KindLoss }

func (m GilbertElliott) String() string {
	return fmt.Sprintf("loss gemodel %s %s %s %s", pct(m.P), pct(m.R), pct(m.LossBad), pct(m.LossGood))
}

// New builds a Loss stage.
func (m GilbertElliott) New(env Env) (Fault, error) {
	if err := env.randomly(KindLoss, prob{"p", m.P}, prob{"r", m.R}, prob{"1-h", m.LossBad}, prob{"1-k", m.LossGood}); err != nil {
		return nil, err
	}
	return NewGilbertElliott(m, env.Rand), nil
}

// Kind returns KindCorrupt.
func (Corruption) Kind() Kind { return KindCorrupt }

func (m Corruption) String() string {
	s := "corrupt " + pct(m.P)
	if m.Bits > 1 {
		s += " bits " + strconv.Itoa(m.Bits)
	}
	return s
}

// New builds a Corrupt stage.
func (m Corruption) New(env Env) (Fault, error) {
	if m.Bits < 0 || m.Bits > 64 {
		return nil, fmt.Errorf("corrupt: bits %d out of 1..64", m.Bits)
	}
	if err := env.randomly(KindCorrupt, prob{"probability", m.P}); err != nil {
		return nil, err
	}
	return NewCorrupt(m, env.Rand), nil
}

// Kind returns KindDuplicate.
func (Duplication) Kind() Kind { return KindDuplicate }

func (m Duplication) String() string { return "duplicate " + pct(m.P) }

// New builds a Duplicate stage.
func (m Duplication) New(env Env) (Fault, error) {
	if err := env.randomly(KindDuplicate, prob{"probability", m.P}); err != nil {
		return nil, err
	}
	return NewDuplicate(m, env.Rand), nil
}

func (m Delay) kind() Kind {
	if m.Delay == 0 && m.Jitter == 0 && m.Reorder > 0 {
		return KindReorder
	}
	return KindDelay
}

// Kind returns KindDelay, or KindReorder when only Reorder is set.
func (m Delay) Kind() Kind { return m.kind() }

func (m Delay) String() string {
	var b strings.Builder
	if m.kind() == KindReorder {
		b.WriteString("reorder " + pct(m.Reorder))
	} else {
		b.WriteString("delay " + m.Delay.String())
		if m.Jitter > 0 {
			b.WriteString(" jitter " + m.Jitter.String() + " dist " + m.Dist.String())
			if m.Dist == DistPareto && m.Alpha != 0 && m.Alpha != DefaultParetoAlpha {
				b.WriteString(" alpha " + ftoa(m.Alpha))
			}
		}
		if m.Reorder > 0 {
			b.WriteString(" reorder " + pct(m.Reorder))
		}
	}
	if m.Reorder > 0 && m.Hold != 0 && m.Hold != DefaultHold {
		b.WriteString(" hold " + m.Hold.String())
	}
	return b.String()
}

// New builds a Delayer stage.
func (m Delay) New(env Env) (Fault, error) {
	k := m.kind()
	switch {
	case m.Delay < 0 || m.Jitter < 0 || m.Hold < 0:
		return nil, fmt.Errorf("%s: negative duration", k)
	case m.Dist > DistPareto:
		return nil, fmt.Errorf("%s: unknown distribution %d", k, m.Dist)
	case m.Dist == DistPareto && m.Alpha != 0 && m.Alpha <= 2:
		return nil, fmt.Errorf("%s: pareto alpha %v must exceed 2 (finite variance)", k, m.Alpha)
	}
	if err := env.needSched(k); err != nil {
		return nil, err
	}
	if err := env.randomly(k, prob{"reorder", m.Reorder}); err != nil {
		return nil, err
	}
	return NewDelay(m, env.Sched, env.Rand), nil
}

// Kind returns KindRate.
func (RateLimit) Kind() Kind { return KindRate }

func (m RateLimit) String() string {
	s := "rate " + m.Rate.String()
	if m.Queue != 0 && m.Queue != DefaultRateQueue {
		s += " queue " + strconv.FormatInt(m.Queue, 10)
	}
	return s
}

// New builds a Shaper stage.
func (m RateLimit) New(env Env) (Fault, error) {
	if m.Rate <= 0 {
		return nil, fmt.Errorf("rate: rate must be positive")
	}
	if m.Queue < 0 {
		return nil, fmt.Errorf("rate: negative queue")
	}
	if err := env.needSched(KindRate); err != nil {
		return nil, err
	}
	return NewRate(m, env.Sched), nil
}

// Kind returns KindDown, or KindFlap when Period is set.
func (m Flap) Kind() Kind {
	if m.Period == 0 {
		return KindDown
	}
	return KindFlap
}

func (m Flap) String() string {
	if m.Period == 0 {
		return "down"
	}
	s := "flap period " + m.Period.String() + " down " + m.Down.String()
	if m.Offset != 0 {
		s += " offset " + m.Offset.String()
	}
	return s
}

// New builds a LinkFault stage.
func (m Flap) New(env Env) (Fault, error) {
	if m.Period != 0 && (m.Period < 0 || m.Down <= 0 || m.Down > m.Period || m.Offset < 0) {
		return nil, fmt.Errorf("flap: want period > 0, 0 < down ≤ period, offset ≥ 0 (got period %s down %s offset %s)", m.Period, m.Down, m.Offset)
	}
	if err := env.needSched(m.Kind()); err != nil {
		return nil, err
	}
	return NewLinkFault(m, env.Sched), nil
}

// Kind returns KindStorm.
func (PFCStorm) Kind() Kind { return KindStorm }

func (m PFCStorm) String() string {
	s := fmt.Sprintf("storm prio %d quanta %d interval %s", m.Prio, m.Quanta, m.Interval)
	if m.For > 0 {
		s += " for " + m.For.String()
	}
	return s
}

// New builds a Storm generator.
func (m PFCStorm) New(env Env) (Fault, error) {
	if err := env.needSched(KindStorm); err != nil {
		return nil, err
	}
	return NewStorm(m, env.Sched, env.SrcMAC, env.Raw)
}

// Kind returns KindECNOff.
func (ECNOff) Kind() Kind { return KindECNOff }

func (ECNOff) String() string { return "ecn-off" }

// New builds the ECN-off stage.
func (ECNOff) New(Env) (Fault, error) { return NewECNOff(), nil }

// Kind returns KindPFCOff.
func (PFCOff) Kind() Kind { return KindPFCOff }

func (m PFCOff) String() string { return "pfc-off prio " + strconv.Itoa(m.Prio) }

// New builds the PFC-off stage.
func (m PFCOff) New(Env) (Fault, error) {
	if m.Prio < 0 || m.Prio > 7 {
		return nil, fmt.Errorf("pfc-off: priority %d out of 0..7", m.Prio)
	}
	return NewPFCOff(m), nil
}

// Kind returns KindDSCPMap.
func (DSCPMap) Kind() Kind { return KindDSCPMap }

func (m DSCPMap) String() string { return "dscp-map " + m.pairs() }

// New builds the DSCP rewrite stage.
func (m DSCPMap) New(Env) (Fault, error) {
	if m.pairs() == "" {
		return nil, fmt.Errorf("dscp-map: no rewrite")
	}
	return NewDSCPRewrite(m), nil
}

func (m Traffic) kind() Kind {
	if m.Incast {
		return KindIncast
	}
	return KindElephant
}

// Kind returns KindElephant or KindIncast.
func (m Traffic) Kind() Kind { return m.kind() }

func (m Traffic) String() string {
	var b strings.Builder
	b.WriteString(string(m.kind()))
	b.WriteString(" dst " + m.Dst.String())
	if m.Src.IsValid() {
		b.WriteString(" src " + m.Src.String())
	}
	if m.Rate > 0 {
		b.WriteString(" rate " + m.Rate.String())
	}
	if m.Incast {
		fmt.Fprintf(&b, " burst %d period %s", m.Burst, m.Period)
	} else if m.Off > 0 {
		fmt.Fprintf(&b, " on %s off %s", m.On, m.Off)
	}
	fmt.Fprintf(&b, " size %d dscp %d prio %d sport %d qp %d", m.Size, m.DSCP, m.Prio, m.SrcPort, m.QP)
	if m.For > 0 {
		b.WriteString(" for " + m.For.String())
	}
	return b.String()
}

// New builds a TrafficSource generator; Src defaults to env.SrcIP.
func (m Traffic) New(env Env) (Fault, error) {
	if err := env.needSched(m.kind()); err != nil {
		return nil, err
	}
	if !m.Src.IsValid() {
		m.Src = env.SrcIP
	}
	if m.DstPort == 0 {
		m.DstPort = rocePort
	}
	return NewTraffic(m, env.Sched, env.Rate, env.SrcMAC, env.Raw)
}

// DefaultTraffic returns a Traffic with every default filled in, to dst.
func DefaultTraffic(dst netip.Addr) Traffic {
	return Traffic{Dst: dst, SrcPort: DefaultTrafficSport, DstPort: rocePort, DSCP: DefaultTrafficDSCP,
		Prio: DefaultTrafficPrio, QP: DefaultTrafficQP, Size: DefaultTrafficSize}
}
