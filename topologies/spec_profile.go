package topologies

// ProfileSpec is a switch profile as written. Every key is optional: a
// profile starts as a copy of its base (default-be unless given) and the
// keys written override it.
type ProfileSpec struct {
	Where `yaml:"-"`
	// Name is the key under profiles.
	Name string `yaml:"-"`
	// Profile this one starts from: a built-in (default-be, default-fe) or another profile of the file. Default default-be.
	Base string `yaml:"base,omitempty"`
	// Shared packet buffer of the switch, e.g. 32MB.
	Buffer *Size `yaml:"buffer,omitempty"`
	// DSCP (0..63) to traffic class (0..7) entries, overriding the base's map.
	DSCP map[int]int `yaml:"dscp,omitempty"`
	// ECN marking per traffic class (0..7): a mapping, or off.
	ECN map[int]*ECNSpec `yaml:"ecn,omitempty"`
	// Priority flow control; off for a lossy switch.
	PFC *PFCSpec `yaml:"pfc,omitempty"`
	// Egress scheduling: strict classes and DWRR weights of the others.
	Scheduler *SchedulerSpec `yaml:"scheduler,omitempty"`
	// Packet trimming of one lossy class; off to disable.
	Trim *TrimSpec `yaml:"trim,omitempty"`
	// How equal-cost next hops are chosen: hash fields and packet spraying.
	ECMP *ECMPSpec `yaml:"ecmp,omitempty"`
	// Per traffic class cap of one egress queue, e.g. {0: 4MB}; 0 = only the shared buffer limits it.
	QueueLimit map[int]*Size `yaml:"queue-limit,omitempty"`
}

// ECNSpec is WRED/ECN marking of one traffic class: no mark below kmin,
// probability rising linearly to pmax at kmax, always above kmax.
type ECNSpec struct {
	Where `yaml:"-"`
	// Off is set by writing off instead of a mapping.
	Off bool `yaml:"-"`
	// Queue depth where marking starts.
	Kmin *Size `yaml:"kmin,omitempty"`
	// Queue depth where marking probability reaches pmax (and beyond which every packet is marked).
	Kmax *Size `yaml:"kmax,omitempty"`
	// Marking probability at kmax, in (0, 1]: 0.2, 1/5 or 20%.
	Pmax *Fraction `yaml:"pmax,omitempty"`
	// Where the queue depth is compared: enqueue or dequeue.
	Mark string `yaml:"mark,omitempty" jsonschema:"enum=enqueue,enum=dequeue"`
	// Port rate kmin and kmax are given for; they scale linearly with the port's rate. off = absolute thresholds.
	Scale *RateOrOff `yaml:"scale,omitempty"`
}

// PFCSpec is priority flow control (802.1Qbb) and the ingress accounting
// behind it. Give either alpha (dynamic threshold) or xoff (static).
type PFCSpec struct {
	Where `yaml:"-"`
	// Off is set by writing pfc: off (no lossless class).
	Off bool `yaml:"-"`
	// Lossless priorities (0..7).
	Lossless []int `yaml:"lossless,omitempty"`
	// Dynamic threshold: XOFF when a priority group's shared use exceeds alpha × free shared buffer (1/8, 0.125 or 12.5%).
	Alpha *Fraction `yaml:"alpha,omitempty"`
	// Static threshold: XOFF when a priority group's shared use exceeds this many bytes.
	XOFF *Size `yaml:"xoff,omitempty"`
	// XON hysteresis: resume when the use falls this far below the XOFF threshold.
	XONOffset *Size `yaml:"xon-offset,omitempty"`
	// Headroom per (ingress port, lossless priority): bytes, or auto (sized from link rate, delay and MTU).
	Headroom *SizeOrAuto `yaml:"headroom,omitempty"`
	// Bytes reserved per (ingress port, priority group) before the shared pool is used.
	Reserve *Size `yaml:"reserve,omitempty"`
	// Pause time sent in XOFF frames, in quanta of 512 bit times (1..65535).
	PauseQuanta *int `yaml:"pause-quanta,omitempty" jsonschema:"minimum=1,maximum=65535"`
	// PFC watchdog (storm detection); off to disable.
	Watchdog *WatchdogSpec `yaml:"watchdog,omitempty"`
}

// WatchdogSpec is the PFC watchdog: a queue paused continuously for detect
// is declared stormed; its action applies until it has been unpaused for recover.
type WatchdogSpec struct {
	Where `yaml:"-"`
	// Off is set by writing watchdog: off.
	Off bool `yaml:"-"`
	// How long a queue must stay paused to be declared stormed, e.g. 200ms.
	Detect *Duration `yaml:"detect,omitempty"`
	// How long without pauses before the queue is restored.
	Recover *Duration `yaml:"recover,omitempty"`
	// drop: drop the stormed queue's packets; ignore: ignore pauses (transmit anyway).
	Action string `yaml:"action,omitempty" jsonschema:"enum=drop,enum=ignore"`
}

// SchedulerSpec is egress scheduling: strict classes first (highest class
// number first), then DWRR among the others.
type SchedulerSpec struct {
	Where `yaml:"-"`
	// Strict-priority traffic classes (0..7).
	Strict []int `yaml:"strict,omitempty"`
	// DWRR weights of non-strict classes (class: weight); unlisted classes keep the base's weight.
	Weights map[int]int `yaml:"weights,omitempty"`
}

// TrimSpec is packet trimming: a packet of a lossy class that would be
// dropped (or whose queue is above threshold) is cut to size bytes and sent
// in class to instead.
type TrimSpec struct {
	Where `yaml:"-"`
	// Off is set by writing trim: off.
	Off bool `yaml:"-"`
	// Lossy traffic class whose packets are trimmed.
	TC *int `yaml:"tc,omitempty" jsonschema:"minimum=0,maximum=7"`
	// Queue depth above which packets are trimmed; default: only when they would be dropped.
	Threshold *Size `yaml:"threshold,omitempty"`
	// Bytes kept of a trimmed packet (headers); default 64.
	Size *Size `yaml:"size,omitempty"`
	// Traffic class trimmed packets are sent in; default 7.
	To *int `yaml:"to,omitempty" jsonschema:"minimum=0,maximum=7"`
}

// ECMPSpec is next-hop selection among equal-cost ports.
type ECMPSpec struct {
	Where `yaml:"-"`
	// Fields of the flow hash: 5-tuple (default), or 5-tuple+qp to add the
	// RoCEv2 destination QP (QP-aware, "enhanced" ECMP).
	Hash string `yaml:"hash,omitempty" jsonschema:"enum=5-tuple,enum=5-tuple+qp"`
	// DSCPs (0..63) whose packets are sprayed: each packet picks its own next hop.
	Spray []int `yaml:"spray,omitempty"`
	// How sprayed packets pick: round-robin (default) or random.
	SprayMode string `yaml:"spray-mode,omitempty" jsonschema:"enum=round-robin,enum=random"`
}
