package fabric

import (
	"errors"
	"fmt"

	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/wire"
)

// FrameOverhead is what the switch model's MTU (a frame length as
// wire.Packet.Len counts it: header through payload, no FCS) adds to a
// link's IP MTU: 14 bytes of Ethernet header and room for one 802.1Q tag.
const FrameOverhead = 14 + 4

// TrimDSCP is the DSCP written into trimmed packets. The topology format
// has no knob for it; 63 is the switch model's default.
const TrimDSCP = 63

// CNPDSCP is the conventional DSCP of RoCEv2 CNPs. The topology format has
// no CNP class; the switch puts CNPs in the class the profile maps this
// DSCP to, whatever DSCP they carry.
const CNPDSCP = 48

// SwitchConfig converts a resolved switch profile into the switch model's
// configuration, for a switch whose ports are ports (they give the MTU and
// the PFC headroom). Every profile knob lands in the config:
//
//   - Buffer → BufferBytes; the largest port IP MTU + FrameOverhead → MTU.
//   - DSCP → DSCPToTC; PCPs map to the class of the same number; CNPs go
//     to the class of DSCP 48 (CNPDSCP).
//   - ECN[tc] → ECN[tc]: Kmin, Kmax, Pmax, mark point (dequeue →
//     AtDequeue) and ScaleRate → RefRate, so the model scales the
//     thresholds to each port's rate exactly as Port.ECN does.
//   - PFC: Lossless → LosslessPriorities; dynamic mode → Alpha, static
//     mode → Alpha 0 and XOffThreshold; XONOffset, Reserve, PauseQuanta;
//     watchdog Detect/Recover/Action (disabled → Detect 0).
//   - Headroom: the model has one headroom for every lossless PG of the
//     switch, or sizes it per port itself. When every port needs the same
//     headroom (by the profile's rule, topologies.PFC.HeadroomFor), that
//     value is set and the model reserves exactly what the topology
//     planned. When ports differ (mixed rates, delays or MTUs) and the
//     profile says auto, the model sizes each port with its own rule,
//     switchmodel.HeadroomFor, which counts 2 × MTU rather than
//     2 × (IP MTU + 38): within 40 bytes per PG of the topology's figure.
//   - Scheduler → Sched.Strict and Weights; the DWRR quantum is one
//     maximum frame on the wire (not a profile knob).
//   - Trim → Trim.Classes {TC}, Bytes = Size, Priority = To, DSCP = TrimDSCP.
//   - QueueLimit → EgressQueueLimit.
//
// It fails for what the model cannot represent: per-class queue limits
// that differ between lossy classes, a limit on a lossless class, a trim
// threshold above zero (the model trims only packets the buffer refuses),
// fixed zero headroom with lossless priorities (the model reads 0 as
// auto), pause quanta outside 1..65535, a watchdog enabled with no detect
// time, and anything switchmodel itself rejects.
func SwitchConfig(p *topologies.Profile, ports []*topologies.Port) (switchmodel.Config, error) {
	if p == nil {
		return switchmodel.Config{}, errors.New("switch config: no profile")
	}
	if len(ports) == 0 {
		return switchmodel.Config{}, fmt.Errorf("switch config (profile %s): no ports", p.Name)
	}
	c := switchmodel.DefaultConfig()
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	c.BufferBytes = p.Buffer
	mtu := 0
	for _, pt := range ports {
		mtu = max(mtu, pt.MTU)
	}
	c.MTU = mtu + FrameOverhead

	for d, tc := range p.DSCP {
		if tc < 0 || tc >= switchmodel.NumTC {
			bad("DSCP %d maps to class %d, out of range 0..7", d, tc)
			continue
		}
		c.DSCPToTC[d] = uint8(tc)
	}
	c.CNPClass = c.DSCPToTC[CNPDSCP]

	for tc, e := range p.ECN {
		c.ECN[tc] = switchmodel.ECNConfig{
			Enabled:   e.Enabled,
			Kmin:      e.Kmin,
			Kmax:      e.Kmax,
			Pmax:      e.Pmax,
			AtDequeue: e.Mark == topologies.MarkDequeue,
			RefRate:   e.ScaleRate,
		}
		if e.Mark != topologies.MarkDequeue && e.Mark != topologies.MarkEnqueue && e.Mark != "" {
			bad("ECN of class %d: unknown mark point %q", tc, e.Mark)
		}
	}

	pfcConfig(&c, p, ports, bad)

	c.Sched.Strict = 0
	for tc := range topologies.NumTC {
		if p.Scheduler.Strict[tc] {
			c.Sched.Strict |= switchmodel.TCs(tc)
		}
		c.Sched.Weights[tc] = p.Scheduler.Weights[tc]
		if !p.Scheduler.Strict[tc] && p.Scheduler.Weights[tc] < 1 {
			bad("scheduler: class %d has weight %d, the model needs at least 1", tc, p.Scheduler.Weights[tc])
		}
	}
	c.Sched.Quantum = wire.OnWireBytes(c.MTU)

	c.Trim = switchmodel.TrimConfig{Bytes: 64, Priority: 7, DSCP: TrimDSCP}
	if t := p.Trim; t != nil {
		switch {
		case t.TC < 0 || t.TC >= switchmodel.NumTC || t.To < 0 || t.To >= switchmodel.NumTC:
			bad("trim: class %d to %d out of range", t.TC, t.To)
		case t.Threshold > 0:
			bad("trim: threshold %d B: the switch model trims only packets the buffer refuses (threshold 0)", t.Threshold)
		default:
			c.Trim = switchmodel.TrimConfig{
				Classes:  switchmodel.TCs(t.TC),
				Bytes:    int(t.Size),
				Priority: uint8(t.To),
				DSCP:     TrimDSCP,
			}
			// A trimmed header must keep its high priority at every later
			// hop, which classifies it by DSCP: map the trim mark there.
			c.DSCPToTC[TrimDSCP] = uint8(t.To)
		}
	}

	c.ECMP.QPAware = p.ECMP.QPAware
	c.ECMP.SprayRandom = p.ECMP.SprayRandom
	c.ECMP.SprayDSCPs = nil
	for _, d := range p.ECMP.Spray {
		c.ECMP.SprayDSCPs = append(c.ECMP.SprayDSCPs, uint8(d))
	}

	c.EgressQueueLimit = 0
	limitTC := -1
	for tc, l := range p.QueueLimit {
		switch {
		case l == 0:
		case p.PFC.Lossless[tc]:
			bad("queue-limit of class %d: the switch model does not limit lossless queues (PFC bounds them)", tc)
		case limitTC < 0:
			c.EgressQueueLimit, limitTC = l, tc
		case l != c.EgressQueueLimit:
			bad("queue-limit: classes %d and %d differ (%d B, %d B); the switch model has one limit for all lossy queues", limitTC, tc, c.EgressQueueLimit, l)
		}
	}
	if limitTC >= 0 {
		for tc, l := range p.QueueLimit {
			if l == 0 && !p.PFC.Lossless[tc] {
				bad("queue-limit: class %d has none but class %d has %d B; the switch model has one limit for all lossy queues", tc, limitTC, c.EgressQueueLimit)
				break
			}
		}
	}

	if len(errs) == 0 {
		// Let the model check the rest (shared pool left, ranges).
		_, err := switchmodel.New(switchmodel.Options{Name: p.Name, Config: c, Sched: sim.New(0), Ports: PortSpecs(ports)})
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return switchmodel.Config{}, fmt.Errorf("switch config (profile %s): %w", p.Name, err)
	}
	return c, nil
}

// pfcConfig fills c.PFC from the profile.
func pfcConfig(c *switchmodel.Config, p *topologies.Profile, ports []*topologies.Port, bad func(string, ...any)) {
	f := p.PFC
	c.PFC.LosslessPriorities = 0
	for tc, l := range f.Lossless {
		if l {
			c.PFC.LosslessPriorities |= switchmodel.TCs(tc)
		}
	}
	switch f.Mode {
	case topologies.ThresholdDynamic:
		c.PFC.Alpha, c.PFC.XOffThreshold = f.Alpha, 0
		if f.Alpha <= 0 {
			bad("pfc: dynamic threshold with alpha %g", f.Alpha)
		}
	case topologies.ThresholdStatic:
		c.PFC.Alpha, c.PFC.XOffThreshold = 0, f.XOFF
		if f.XOFF <= 0 {
			bad("pfc: static threshold with xoff %d B", f.XOFF)
		}
	default:
		bad("pfc: unknown threshold mode %q", f.Mode)
	}
	c.PFC.XOnOffset = f.XONOffset
	c.PFC.Reserved = f.Reserve
	switch {
	case f.PauseQuanta >= 1 && f.PauseQuanta <= 0xFFFF:
		c.PFC.Quanta = uint16(f.PauseQuanta)
	case f.Enabled():
		bad("pfc: pause quanta %d out of range 1..65535", f.PauseQuanta)
	}

	c.PFC.Headroom = 0
	if f.Enabled() {
		h := f.HeadroomFor(ports[0].Rate, ports[0].Delay, ports[0].MTU)
		uniform := true
		for _, pt := range ports[1:] {
			if f.HeadroomFor(pt.Rate, pt.Delay, pt.MTU) != h {
				uniform = false
			}
		}
		switch {
		case h <= 0 && !f.HeadroomAuto:
			bad("pfc: fixed headroom %d B with lossless priorities (the switch model reads 0 as auto)", h)
		case uniform:
			c.PFC.Headroom = h
		}
	}

	c.PFC.Watchdog = switchmodel.WatchdogConfig{Recover: f.Watchdog.Recover}
	if w := f.Watchdog; w.Enabled {
		c.PFC.Watchdog.Detect = w.Detect
		if w.Detect <= 0 || w.Recover <= 0 {
			bad("pfc watchdog: detect %v and recover %v must be positive", w.Detect, w.Recover)
		}
		switch w.Action {
		case topologies.WatchdogDrop:
			c.PFC.Watchdog.Action = switchmodel.WatchdogDrop
		case topologies.WatchdogIgnore:
			c.PFC.Watchdog.Action = switchmodel.WatchdogIgnore
		default:
			bad("pfc watchdog: unknown action %q", w.Action)
		}
	}
}

// PortSpecs returns the switch model's port specs for a switch's ports, in
// order: index i of the result is port i of the model (topology port
// Index i+1).
func PortSpecs(ports []*topologies.Port) []switchmodel.PortSpec {
	out := make([]switchmodel.PortSpec, len(ports))
	for i, pt := range ports {
		out[i] = switchmodel.PortSpec{Rate: pt.Rate, Delay: pt.Delay}
	}
	return out
}

// NodeConfig is SwitchConfig for switch node n, its profile and its ports.
func NodeConfig(n *topologies.Node) (switchmodel.Config, error) {
	if n.Kind != topologies.KindSwitch {
		return switchmodel.Config{}, fmt.Errorf("node %s is a %s, not a switch", n.Name, n.Kind)
	}
	c, err := SwitchConfig(n.Profile, n.Ports)
	if err != nil {
		return c, fmt.Errorf("switch %s: %w", n.Name, err)
	}
	return c, nil
}
