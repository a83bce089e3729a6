package switchmodel

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/wire"
)

// NumTC is the number of traffic classes (and PFC priorities, and ingress
// priority groups) of every port.
const NumTC = 8

// TCSet is a set of traffic classes, bit i for class i.
type TCSet uint8

// TCs returns the set holding the given classes.
func TCs(tcs ...int) TCSet {
	var s TCSet
	for _, tc := range tcs {
		s |= 1 << uint(tc&7)
	}
	return s
}

// Has reports whether tc is in s.
func (s TCSet) Has(tc int) bool { return tc >= 0 && tc < NumTC && s&(1<<uint(tc)) != 0 }

// Len returns the number of classes in s.
func (s TCSet) Len() int { return bits.OnesCount8(uint8(s)) }

// Config is a switch profile: buffer, classification, PFC, ECN, scheduling,
// forwarding and trimming knobs. Byte quantities are in frame bytes
// (wire.Packet.Len), the unit the MMU accounts in. DefaultConfig documents
// every default.
type Config struct {
	// BufferBytes is the shared packet buffer of the whole switch.
	BufferBytes int64
	// MTU is the largest frame (wire.Packet.Len) forwarded; longer frames
	// are dropped (reason "oversize"). It also sizes automatic headroom.
	MTU int

	// DSCPToTC maps an IP packet's DSCP to its traffic class.
	DSCPToTC [64]uint8
	// PCPToTC maps an 802.1Q priority to a traffic class. It classifies
	// tagged frames that carry no IP header, and every tagged frame when
	// TrustPCP is set.
	PCPToTC [8]uint8
	// TrustPCP makes the VLAN PCP win over DSCP for tagged IP frames.
	TrustPCP bool
	// CNPClass is the traffic class of RoCEv2 CNPs, whatever their DSCP.
	CNPClass uint8

	PFC   PFCConfig
	ECN   [NumTC]ECNConfig
	Sched SchedConfig
	ECMP  ECMPConfig
	Trim  TrimConfig

	// EgressQueueLimit caps the bytes of one lossy egress queue; a packet
	// that would exceed it is dropped (reason "egress_limit"). 0 means no
	// static limit (the ingress dynamic threshold still bounds the queue).
	// Lossless queues are exempt, as in real ASICs: PFC bounds them.
	EgressQueueLimit int64
}

// PFCConfig holds the ingress buffer accounting and 802.1Qbb knobs.
type PFCConfig struct {
	// LosslessPriorities are the priorities whose ingress priority group
	// gets headroom and sends PFC, and whose egress queue obeys PFC.
	LosslessPriorities TCSet
	// Alpha is the dynamic-threshold factor: a priority group may hold
	// Alpha × (free shared buffer) in the shared pool. 0 selects the static
	// XOffThreshold instead.
	Alpha float64
	// XOffThreshold is the static per-PG shared-pool limit in bytes, used
	// when Alpha is 0.
	XOffThreshold int64
	// XOnOffset is the XON hysteresis: a paused PG resumes its upstream
	// when its shared use is at least XOnOffset below the threshold.
	XOnOffset int64
	// Headroom is the per lossless PG headroom in bytes; 0 sizes it per
	// port with HeadroomFor(port rate, port delay, MTU).
	Headroom int64
	// Reserved is the guaranteed minimum of every (port, PG), in bytes.
	Reserved int64
	// Quanta is the pause time the switch puts in its XOFF frames, in
	// units of 512 bit times. XOFF is refreshed after half of it while the
	// PG stays congested.
	Quanta uint16
	// Watchdog detects egress queues stuck in pause.
	Watchdog WatchdogConfig
}

// WatchdogAction is what the PFC watchdog does to a queue stuck in pause.
type WatchdogAction uint8

// Watchdog actions.
const (
	// WatchdogDrop drops the queue's packets, and every packet that
	// arrives for it, for the recovery time, ignoring pauses.
	WatchdogDrop WatchdogAction = iota
	// WatchdogIgnore transmits the queue ignoring pauses for the
	// recovery time.
	WatchdogIgnore
)

func (a WatchdogAction) String() string {
	if a == WatchdogIgnore {
		return "ignore"
	}
	return "drop"
}

// WatchdogConfig configures the PFC watchdog. A zero Detect disables it.
type WatchdogConfig struct {
	// Detect is how long a lossless queue must stay paused, continuously
	// and with packets queued, before the watchdog fires.
	Detect clock.Duration
	// Recover is how long the watchdog action lasts once fired.
	Recover clock.Duration
	// Action is what happens during the recovery time.
	Action WatchdogAction
}

// ECNConfig is the WRED/ECN profile of one egress traffic class.
type ECNConfig struct {
	// Enabled turns marking on for the class.
	Enabled bool
	// Kmin and Kmax are egress queue depths in bytes: no marking at or
	// below Kmin, probability rising linearly to Pmax at Kmax, certain
	// marking above Kmax.
	Kmin, Kmax int64
	// Pmax is the marking probability at Kmax.
	Pmax float64
	// AtDequeue marks when a packet leaves the queue, looking at the bytes
	// left behind it; otherwise when it enters, looking at the bytes ahead.
	AtDequeue bool
	// DropNonECT drops (reason "wred") Not-ECT packets that would have been
	// marked, instead of forwarding them unmarked.
	DropNonECT bool
	// RefRate, when non-zero, is the line rate Kmin and Kmax are given
	// for: a port of rate r uses them scaled by r/RefRate.
	RefRate clock.Rate
}

// SchedConfig configures each egress port's scheduler.
type SchedConfig struct {
	// Strict classes are served first, highest class number first.
	Strict TCSet
	// Weights are the DWRR weights of the other classes (0 counts as 1).
	Weights [NumTC]int
	// Quantum is the DWRR quantum per unit of weight, in wire bytes.
	Quantum int
}

// ECMPConfig configures next-hop selection among equal-cost ports.
type ECMPConfig struct {
	// Seed perturbs the flow hash, so that switches of a fabric hash
	// differently. 0 draws it from Options.Rand.
	Seed uint64
	// QPAware adds the RoCEv2 destination QP to the 5-tuple hash.
	QPAware bool
	// SprayDSCPs lists the DSCPs whose packets are sprayed: each packet
	// picks its own next hop instead of its flow's.
	SprayDSCPs []uint8
	// SprayRandom picks sprayed next hops at random (from Options.Rand)
	// instead of round-robin per route.
	SprayRandom bool
}

// TrimConfig configures payload trimming.
type TrimConfig struct {
	// Classes are the (lossy) traffic classes whose packets are trimmed
	// instead of dropped when the buffer refuses them. Empty disables
	// trimming.
	Classes TCSet
	// Bytes is the length a trimmed frame is cut to (headers kept).
	Bytes int
	// Priority is the traffic class trimmed headers are queued in.
	Priority uint8
	// DSCP is written into trimmed packets so that receivers recognise
	// them (the UEC way of marking a trimmed packet).
	DSCP uint8
}

// DisableECN turns WRED/ECN marking off for the given traffic classes (all
// when none are given): the switch-side "ECN not configured"
// misconfiguration. faults.ECNOff is the link-side model of the same
// mistake.
func (c *Config) DisableECN(tcs ...int) {
	for tc := range c.ECN {
		if len(tcs) == 0 || slices.Contains(tcs, tc) {
			c.ECN[tc].Enabled = false
		}
	}
}

// HeadroomFor returns the PFC headroom a lossless priority group needs on a
// port of rate r whose cable has one-way delay d: 3 × r × d (the round trip
// of the pause plus the response time, the HPCC/ns-3 rule of thumb) plus two
// maximum frames (the one the upstream is sending when the pause arrives
// and the one this port is sending when it decides to pause).
func HeadroomFor(r clock.Rate, d clock.Duration, mtu int) int64 {
	bdp := float64(r) / 8 * d.Seconds()
	return int64(3*bdp+0.5) + 2*int64(mtu)
}

// DefaultConfig returns the reference profile:
//
//   - 32 MiB of buffer, the order of a Tomahawk-class 12.8T ASIC
//     (Broadcom BCM56980 Tomahawk 3: 64 MB; Tomahawk 2: 16 MB; Trident 3:
//     32 MB) — 32 MiB sits in that range;
//   - MTU 9216 (jumbo, the common switch maximum);
//   - DSCP 26 → TC3 (RoCE data, lossless), DSCP 48 → TC6 (CNP, strict),
//     every other DSCP → TC0; PCP p → TC p; CNPs in TC6 whatever their DSCP;
//   - PFC on priority 3: α = 1/8, XON offset 3 KiB, reserve 4 KiB per PG,
//     headroom sized per port by HeadroomFor, XOFF quanta 0xFFFF, watchdog
//     off (Detect 0; Recover 100 ms and action drop when turned on);
//   - WRED/ECN on TC3: Kmin 400 KB, Kmax 1600 KB, Pmax 0.2 at 100G, scaled
//     with the port rate, marking at enqueue;
//   - TC6 and TC7 strict, DWRR weight 1 for TC0–5 with a 1600-byte quantum;
//   - 5-tuple ECMP (not QP-aware), no spraying, no trimming, no static
//     egress limit.
//
// These are the HPCC ns-3 switch reference values named in docs/design.md.
func DefaultConfig() Config {
	c := Config{
		BufferBytes: 32 << 20,
		MTU:         9216,
		CNPClass:    6,
		PFC: PFCConfig{
			LosslessPriorities: TCs(3),
			Alpha:              1.0 / 8,
			XOnOffset:          3 << 10,
			Reserved:           4 << 10,
			Quanta:             0xFFFF,
			Watchdog: WatchdogConfig{
				Recover: 100 * clock.Millisecond,
				Action:  WatchdogDrop,
			},
		},
		Sched: SchedConfig{Strict: TCs(6, 7), Quantum: 1600},
		Trim:  TrimConfig{Bytes: 64, Priority: 7, DSCP: 63},
	}
	c.DSCPToTC = wire.DefaultDSCPToTC()
	for i := range c.PCPToTC {
		c.PCPToTC[i] = uint8(i)
	}
	for i := range c.Sched.Weights {
		c.Sched.Weights[i] = 1
	}
	c.ECN[3] = ECNConfig{
		Enabled: true,
		Kmin:    400_000,
		Kmax:    1_600_000,
		Pmax:    0.2,
		RefRate: 100 * clock.Gbps,
	}
	return c
}

// validate reports every inconsistency of c, joined.
func (c *Config) validate() error {
	var errs []error
	if c.BufferBytes <= 0 {
		errs = append(errs, errors.New("buffer bytes must be positive"))
	}
	if c.MTU <= 0 {
		errs = append(errs, errors.New("MTU must be positive"))
	}
	if c.PFC.Alpha < 0 {
		errs = append(errs, errors.New("PFC alpha must not be negative"))
	}
	if c.PFC.Alpha == 0 && c.PFC.XOffThreshold <= 0 {
		errs = append(errs, errors.New("PFC needs a positive alpha or static XOFF threshold"))
	}
	if c.PFC.Reserved < 0 || c.PFC.Headroom < 0 || c.PFC.XOnOffset < 0 {
		errs = append(errs, errors.New("PFC reserved, headroom and XON offset must not be negative"))
	}
	if c.PFC.LosslessPriorities != 0 && c.PFC.Quanta == 0 {
		errs = append(errs, errors.New("PFC quanta must be positive when a priority is lossless"))
	}
	if c.PFC.Watchdog.Detect < 0 || c.PFC.Watchdog.Recover < 0 {
		errs = append(errs, errors.New("watchdog times must not be negative"))
	}
	for tc, e := range c.ECN {
		if !e.Enabled {
			continue
		}
		if e.Kmin < 0 || e.Kmax < e.Kmin || e.Pmax < 0 || e.Pmax > 1 {
			errs = append(errs, fmt.Errorf("ECN of TC%d: need 0 <= Kmin <= Kmax and 0 <= Pmax <= 1", tc))
		}
	}
	if c.CNPClass >= NumTC {
		errs = append(errs, fmt.Errorf("CNP class %d out of range", c.CNPClass))
	}
	for i, tc := range c.DSCPToTC {
		if tc >= NumTC {
			errs = append(errs, fmt.Errorf("DSCP %d maps to TC%d, out of range", i, tc))
		}
	}
	for i, tc := range c.PCPToTC {
		if tc >= NumTC {
			errs = append(errs, fmt.Errorf("PCP %d maps to TC%d, out of range", i, tc))
		}
	}
	if c.Sched.Quantum <= 0 {
		errs = append(errs, errors.New("DWRR quantum must be positive"))
	}
	for _, d := range c.ECMP.SprayDSCPs {
		if d >= 64 {
			errs = append(errs, fmt.Errorf("spray DSCP %d out of range", d))
		}
	}
	if c.Trim.Classes != 0 {
		if c.Trim.Priority >= NumTC || c.Trim.Bytes <= 0 || c.Trim.DSCP >= 64 {
			errs = append(errs, errors.New("trimming needs a priority < 8, positive bytes and a DSCP < 64"))
		}
		if c.PFC.LosslessPriorities&c.Trim.Classes != 0 {
			errs = append(errs, errors.New("trimmed classes must be lossy"))
		}
	}
	return errors.Join(errs...)
}
