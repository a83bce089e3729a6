package topologies

import (
	"slices"

	"github.com/rocelab/rocelab/core/clock"
)

// NumTC is the number of traffic classes (and PFC priorities) of a switch.
const NumTC = 8

// Profile is a resolved switch profile: every value concrete and typed. The
// lab converts it into the switch model's configuration; arrays are indexed
// by traffic class (equal to the PFC priority and priority group).
type Profile struct {
	// Name is the profile's name (default-be, default-fe, or the file's key).
	Name string `json:"name"`
	// Buffer is the switch's shared packet buffer in bytes.
	Buffer int64 `json:"buffer"`
	// DSCP maps each DSCP value (0..63) to a traffic class.
	DSCP [64]int `json:"dscp"`
	// ECN is the marking configuration of each traffic class.
	ECN [NumTC]ECN `json:"ecn"`
	// PFC is priority flow control and ingress buffer accounting.
	PFC PFC `json:"pfc"`
	// Scheduler is the egress scheduler.
	Scheduler Scheduler `json:"scheduler"`
	// ECMP is next-hop selection among equal-cost ports.
	ECMP ECMP `json:"ecmp"`
	// Trim is packet trimming, nil when disabled.
	Trim *Trim `json:"trim,omitempty"`
	// QueueLimit caps each egress queue in bytes; 0 means only the shared buffer limits it.
	QueueLimit [NumTC]int64 `json:"queue_limit"`
}

// MarkPoint says where ECN compares the queue depth.
type MarkPoint string

// Mark points.
const (
	MarkEnqueue MarkPoint = "enqueue"
	MarkDequeue MarkPoint = "dequeue"
)

// ECN is WRED-style ECN marking of one traffic class: no mark below Kmin,
// probability rising linearly from 0 to Pmax between Kmin and Kmax, and
// every packet marked above Kmax.
type ECN struct {
	Enabled bool      `json:"enabled"`
	Kmin    int64     `json:"kmin"`
	Kmax    int64     `json:"kmax"`
	Pmax    float64   `json:"pmax"`
	Mark    MarkPoint `json:"mark"`
	// ScaleRate is the port rate Kmin and Kmax are given for; they scale
	// linearly with the port's rate. 0 means absolute thresholds.
	ScaleRate clock.Rate `json:"scale_rate"`
}

// At returns Kmin and Kmax for a port of rate r.
func (e ECN) At(r clock.Rate) (kmin, kmax int64) {
	if e.ScaleRate <= 0 || r <= 0 {
		return e.Kmin, e.Kmax
	}
	scale := func(k int64) int64 { return int64(float64(k) * float64(r) / float64(e.ScaleRate)) }
	return scale(e.Kmin), scale(e.Kmax)
}

// ThresholdMode says how the PFC XOFF threshold is computed.
type ThresholdMode string

// Threshold modes.
const (
	// ThresholdDynamic: XOFF when a priority group's shared use reaches
	// Alpha × (buffer − headroom − reserved − shared use of all).
	ThresholdDynamic ThresholdMode = "dynamic"
	// ThresholdStatic: XOFF when a priority group's shared use reaches XOFF bytes.
	ThresholdStatic ThresholdMode = "static"
)

// PFC is priority flow control and the ingress accounting behind it.
type PFC struct {
	// Lossless marks the lossless priorities.
	Lossless [NumTC]bool   `json:"lossless"`
	Mode     ThresholdMode `json:"mode"`
	// Alpha is the dynamic-threshold factor (Mode dynamic).
	Alpha float64 `json:"alpha"`
	// XOFF is the static threshold in bytes (Mode static).
	XOFF int64 `json:"xoff"`
	// XONOffset is the hysteresis: XON when the use falls to threshold − XONOffset.
	XONOffset int64 `json:"xon_offset"`
	// HeadroomAuto sizes the headroom of each port with HeadroomFor;
	// otherwise Headroom bytes per (port, lossless priority).
	HeadroomAuto bool  `json:"headroom_auto"`
	Headroom     int64 `json:"headroom"`
	// Reserve is the bytes reserved per (ingress port, priority group).
	Reserve int64 `json:"reserve"`
	// PauseQuanta is the pause time of XOFF frames, in 512-bit-time quanta.
	PauseQuanta int `json:"pause_quanta"`
	// Watchdog is the PFC storm watchdog.
	Watchdog Watchdog `json:"watchdog"`
}

// Enabled reports whether any priority is lossless.
func (p PFC) Enabled() bool { return slices.Contains(p.Lossless[:], true) }

// LosslessCount is the number of lossless priorities.
func (p PFC) LosslessCount() int {
	n := 0
	for _, l := range p.Lossless {
		if l {
			n++
		}
	}
	return n
}

// EthernetOverhead is what a frame adds to the IP MTU on the wire:
// 14 bytes of header, 4 of FCS, 8 of preamble and 12 of inter-frame gap.
const EthernetOverhead = 38

// HeadroomFor is the PFC headroom of one lossless priority of a port with
// the given link rate, one-way delay and IP MTU, in bytes:
//
//	3 × rate × delay / 8  +  2 × (MTU + EthernetOverhead)
//
// The first term is the HPCC ns-3 rule (bytes in flight over one round trip
// plus the pause's own trip); the second covers a maximum frame already
// being serialized at each end when the XOFF is sent and received. With
// HeadroomAuto off it is the fixed Headroom.
func (p PFC) HeadroomFor(rate clock.Rate, delay clock.Duration, mtu int) int64 {
	if !p.HeadroomAuto {
		return p.Headroom
	}
	return 3*rate.BytesIn(delay) + 2*int64(mtu+EthernetOverhead)
}

// WatchdogActionName names what the PFC watchdog does with a stormed queue,
// as a topology file spells it. The action itself is the switch model's
// (switchmodel.WatchdogAction); switchmodel/fabric maps the name onto it.
type WatchdogActionName string

// Watchdog action names.
const (
	WatchdogDrop   WatchdogActionName = "drop"
	WatchdogIgnore WatchdogActionName = "ignore"
)

// Watchdog is the PFC storm watchdog.
type Watchdog struct {
	Enabled bool               `json:"enabled"`
	Detect  clock.Duration     `json:"detect"`
	Recover clock.Duration     `json:"recover"`
	Action  WatchdogActionName `json:"action"`
}

// Scheduler is egress scheduling: strict classes, highest first, then DWRR
// among the rest with Weights.
type Scheduler struct {
	Strict  [NumTC]bool `json:"strict"`
	Weights [NumTC]int  `json:"weights"`
}

// ECMP is next-hop selection among equal-cost ports. The default hashes the
// 5-tuple and sprays nothing.
type ECMP struct {
	// QPAware adds the RoCEv2 destination QP to the flow hash.
	QPAware bool `json:"qp_aware"`
	// Spray lists the DSCPs whose packets each pick their own next hop.
	Spray []int `json:"spray,omitempty"`
	// SprayRandom picks sprayed next hops at random instead of round-robin.
	SprayRandom bool `json:"spray_random"`
}

// Trim is packet trimming of one lossy class.
type Trim struct {
	// TC is the trimmed (lossy) class.
	TC int `json:"tc"`
	// Threshold is the queue depth above which packets are trimmed; 0 =
	// only packets that would otherwise be dropped.
	Threshold int64 `json:"threshold"`
	// Size is the bytes kept of a trimmed packet.
	Size int64 `json:"size"`
	// To is the class trimmed packets are sent in.
	To int `json:"to"`
}

// Built-in profile names.
const (
	DefaultBE = "default-be"
	DefaultFE = "default-fe"
)

// Reference values of the built-in profiles (docs/topology.md cites them).
const (
	refBuffer      = 32_000_000 // 32MB shared buffer
	refReserve     = 4 << 10    // HPCC ns-3 SwitchMmu: 4 KiB reserved per queue
	refXONOffset   = 3 << 10    // HPCC ns-3 SwitchMmu: resume_offset 3 KiB
	refAlpha       = 1.0 / 8    // HPCC ns-3: pfc_a_shift 3
	refKmin        = 400_000    // HPCC ns-3 config at 100G: KMIN 400 KB
	refKmax        = 1_600_000  // KMAX 1600 KB
	refPmax        = 0.2        // PMAX 0.2
	refRoCEDSCP    = 26
	refRoCETC      = 3
	refCNPDSCP     = 48
	refCNPTC       = 6
	refControlDSCP = 56
	refControlTC   = 7
)

// builtinProfiles returns fresh copies of the built-in profiles.
func builtinProfiles() map[string]*Profile {
	wred := ECN{Enabled: true, Kmin: refKmin, Kmax: refKmax, Pmax: refPmax, Mark: MarkDequeue, ScaleRate: 100 * clock.Gbps}
	base := func(name string) *Profile {
		p := &Profile{Name: name, Buffer: refBuffer}
		for i := range p.ECN {
			p.ECN[i].Mark = MarkDequeue
		}
		p.DSCP[refRoCEDSCP] = refRoCETC
		p.DSCP[refCNPDSCP] = refCNPTC
		p.DSCP[refControlDSCP] = refControlTC
		p.Scheduler.Strict[refCNPTC] = true
		p.Scheduler.Strict[refControlTC] = true
		for tc := range p.Scheduler.Weights {
			if !p.Scheduler.Strict[tc] {
				p.Scheduler.Weights[tc] = 1
			}
		}
		p.PFC = PFC{
			Mode: ThresholdDynamic, Alpha: refAlpha, XONOffset: refXONOffset,
			HeadroomAuto: true, Reserve: refReserve, PauseQuanta: 0xffff,
			Watchdog: Watchdog{Enabled: true, Detect: 200 * clock.Millisecond, Recover: 200 * clock.Millisecond, Action: WatchdogDrop},
		}
		p.ECN[0] = wred
		p.ECN[refRoCETC] = wred
		return p
	}
	be := base(DefaultBE)
	be.PFC.Lossless[refRoCETC] = true

	fe := base(DefaultFE)
	fe.Buffer = 16_000_000
	return map[string]*Profile{DefaultBE: be, DefaultFE: fe}
}

// BuiltinProfile returns a copy of the built-in profile name (default-be or default-fe).
func BuiltinProfile(name string) (*Profile, bool) {
	p, ok := builtinProfiles()[name]
	return p, ok
}

// clone returns a deep copy of p.
func (p *Profile) clone() *Profile {
	c := *p
	if p.Trim != nil {
		t := *p.Trim
		c.Trim = &t
	}
	c.ECMP.Spray = append([]int(nil), p.ECMP.Spray...)
	return &c
}
