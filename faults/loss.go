package faults

import (
	"fmt"
	"math/rand/v2"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/wire"
)

// BernoulliLoss drops each packet independently with probability P.
type BernoulliLoss struct {
	P float64
}

// GilbertElliott is the two-state Markov loss model of Gilbert (1960) and
// Elliott (1963), in the parameterisation of Hasslinger & Hohlfeld (2008)
// that Linux netem uses ("loss gemodel p [r [1-h [1-k]]]"):
//
//	P         p:   probability of moving Good → Bad, per packet
//	R         r:   probability of moving Bad → Good, per packet
//	LossBad   1−h: loss probability in the Bad state
//	LossGood  1−k: loss probability in the Good state
//
// A packet is lost (or not) in the current state, then the state moves.
// The stationary probability of Bad is πB = p/(p+r), the loss rate
// (1−k)·r/(p+r) + (1−h)·p/(p+r). With 1−h = 1 and 1−k = 0 (Gilbert's
// simple model) every Bad packet is lost, loss bursts are geometric with
// mean 1/r and the loss rate is p/(p+r).
type GilbertElliott struct {
	P, R, LossBad, LossGood float64
}

// BurstLoss returns the simple Gilbert model with the given long-run loss
// rate and mean loss-burst length (in packets, ≥ 1): r = 1/burst,
// p = r·rate/(1−rate), 1−h = 1, 1−k = 0.
func BurstLoss(rate, burst float64) GilbertElliott {
	r := 1 / burst
	return GilbertElliott{P: r * rate / (1 - rate), R: r, LossBad: 1}
}

// Rate returns the model's long-run loss rate.
func (g GilbertElliott) Rate() float64 {
	if g.P+g.R == 0 {
		return g.LossGood
	}
	return (g.LossGood*g.R + g.LossBad*g.P) / (g.P + g.R)
}

// Loss drops packets per a Bernoulli or Gilbert–Elliott model.
type Loss struct {
	stage
	rng    *rand.Rand
	params Params
	bern   bool
	p      float64
	ge     GilbertElliott
	bad    bool
}

var _ Stage = (*Loss)(nil)

// NewLoss returns a Bernoulli loss stage drawing from rng.
func NewLoss(m BernoulliLoss, rng *rand.Rand) *Loss {
	return &Loss{rng: rng, params: m, bern: true, p: m.P}
}

// NewGilbertElliott returns a Gilbert–Elliott loss stage drawing from
// rng; it starts in the Good state.
func NewGilbertElliott(m GilbertElliott, rng *rand.Rand) *Loss {
	return &Loss{rng: rng, params: m, ge: m}
}

// Kind returns KindLoss.
func (l *Loss) Kind() Kind { return KindLoss }

// String returns the parameters in Spec syntax.
func (l *Loss) String() string { return l.params.String() }

// Bad reports whether a Gilbert–Elliott model is in the Bad state.
func (l *Loss) Bad() bool { return l.bad }

// Receive drops p or forwards it.
func (l *Loss) Receive(p *wire.Packet) {
	if l.take(p) && l.lose() {
		l.drop()
		return
	}
	l.next.Receive(p)
}

func (l *Loss) lose() bool {
	if l.bern {
		return l.rng.Float64() < l.p
	}
	var lost bool
	if l.bad {
		lost = l.rng.Float64() < l.ge.LossBad
		if l.rng.Float64() < l.ge.R {
			l.bad = false
		}
	} else {
		lost = l.rng.Float64() < l.ge.LossGood
		if l.rng.Float64() < l.ge.P {
			l.bad = true
		}
	}
	return lost
}

// Collect emits the counters.
func (l *Loss) Collect(emit func(telemetry.Sample)) { l.c.emit(KindLoss, emit) }

// Corruption flips Bits random bits of a fraction P of packets.
//
// A RoCEv2 or CNP frame with bytes (Raw) gets its bits flipped inside the
// part the ICRC covers (BTH through ICRC, BTH byte 4 excluded), on a copy
// of Raw, and is forwarded: the receiver's ICRC check fails and it drops
// the packet, counted there. CRC-32 detects every error of up to 3 bits
// in frames of this size (Hamming distance ≥ 4 up to 91607 bits), more
// flips with probability 1 − 2⁻³². Every other packet — payload-free
// descriptors, and frames the lab has no check for (the FCS is not
// modelled) — is dropped by the fault and counted both corrupted and
// dropped: wire.Packet has no "corrupt" flag, and a real receiver's FCS
// check would drop it.
type Corruption struct {
	P    float64
	Bits int // 0 means 1
}

// Corrupt is the corruption stage.
type Corrupt struct {
	stage
	rng *rand.Rand
	m   Corruption
}

var _ Stage = (*Corrupt)(nil)

// NewCorrupt returns a corruption stage drawing from rng.
func NewCorrupt(m Corruption, rng *rand.Rand) *Corrupt {
	if m.Bits <= 0 {
		m.Bits = 1
	}
	return &Corrupt{rng: rng, m: m}
}

// Kind returns KindCorrupt.
func (c *Corrupt) Kind() Kind { return KindCorrupt }

// String returns the parameters in Spec syntax.
func (c *Corrupt) String() string { return c.m.String() }

// Receive corrupts p or forwards it untouched.
func (c *Corrupt) Receive(p *wire.Packet) {
	if c.take(p) && c.rng.Float64() < c.m.P {
		c.c.Corrupted++
		if !c.flip(p) {
			c.drop()
			return
		}
	}
	c.next.Receive(p)
}

// flip flips bits of p's ICRC-covered bytes; false if p has none.
func (c *Corrupt) flip(p *wire.Packet) bool {
	if (p.Kind != wire.KindRoCE && p.Kind != wire.KindCNP) || p.Raw == nil || p.L4Offset == 0 {
		return false
	}
	raw, l4 := p.Raw, int(p.L4Offset)
	if l4+8 > len(raw) {
		return false
	}
	udpLen := int(raw[l4+4])<<8 | int(raw[l4+5])
	start, end := l4+8, l4+udpLen
	if end > len(raw) || end-start < 12+4 {
		return false
	}
	raw = append([]byte(nil), raw...) // the sender may still hold the bytes
	nbits := (end - start - 1) * 8    // BTH byte 4 is masked by the ICRC
	var done [64]int
	n := min(c.m.Bits, len(done), nbits)
	for i := 0; i < n; i++ {
		b := c.rng.IntN(nbits)
		dup := false
		for _, d := range done[:i] {
			dup = dup || d == b
		}
		if dup {
			i--
			continue
		}
		done[i] = b
		byteOff := b / 8
		if byteOff >= 4 {
			byteOff++ // skip BTH byte 4
		}
		raw[start+byteOff] ^= 1 << (b % 8)
	}
	p.Raw = raw
	return true
}

// Collect emits the counters.
func (c *Corrupt) Collect(emit func(telemetry.Sample)) { c.c.emit(KindCorrupt, emit) }

// Duplication sends a copy of a fraction P of packets right after the
// original (same time, descriptor and bytes copied).
type Duplication struct {
	P float64
}

// Duplicate is the duplication stage.
type Duplicate struct {
	stage
	rng *rand.Rand
	m   Duplication
}

var _ Stage = (*Duplicate)(nil)

// NewDuplicate returns a duplication stage drawing from rng.
func NewDuplicate(m Duplication, rng *rand.Rand) *Duplicate {
	return &Duplicate{rng: rng, m: m}
}

// Kind returns KindDuplicate.
func (d *Duplicate) Kind() Kind { return KindDuplicate }

// String returns the parameters in Spec syntax.
func (d *Duplicate) String() string { return d.m.String() }

// Receive forwards p and maybe a copy of it.
func (d *Duplicate) Receive(p *wire.Packet) {
	if !d.take(p) || d.rng.Float64() >= d.m.P {
		d.next.Receive(p)
		return
	}
	cp := clonePacket(p)
	d.c.Duplicated++
	d.next.Receive(p)
	d.next.Receive(cp)
}

// Collect emits the counters.
func (d *Duplicate) Collect(emit func(telemetry.Sample)) { d.c.emit(KindDuplicate, emit) }

// clonePacket copies a descriptor and its bytes.
func clonePacket(p *wire.Packet) *wire.Packet {
	cp := new(wire.Packet)
	*cp = *p
	if p.Raw != nil {
		cp.Raw = append([]byte(nil), p.Raw...)
	}
	return cp
}

func pct(p float64) string { return fmt.Sprintf("%s%%", ftoa(p*100)) }
