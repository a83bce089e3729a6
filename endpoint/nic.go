package endpoint

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"net/netip"
	"unsafe"

	"github.com/rocelab/rocelab/wire/cm"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/seqtab"
	"github.com/rocelab/rocelab/endpoint/cc"
	"github.com/rocelab/rocelab/internal/prefetch"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/metaroce"
	"github.com/rocelab/rocelab/wire/pause"
)

// Options configure a NIC. Zero fields take the defaults named on them.
type Options struct {
	Name string
	// Sched drives the model (the simulator engine or the wall-clock loop).
	Sched clock.Scheduler
	// Rand is the NIC's random source (path port choice); nil derives one from Name.
	Rand *rand.Rand
	// LineRate of the one port (default 100G).
	LineRate clock.Rate
	MAC      [6]byte
	IP       netip.Addr
	// MTU is the largest RDMA payload per packet (default 4096).
	MTU int
	// Raw builds real frames (wire.AppendFrame, ICRC included) that carry
	// payload bytes, and verifies the ICRC of received frames; otherwise
	// frames are descriptors carrying lengths only.
	Raw bool
	// Tailroom is how many spare bytes each frame the NIC builds has
	// after its end, for its driver (the emulation writes a link trailer
	// there instead of copying the frame).
	Tailroom int
	// ReturnRx, if set, is handed back each packet the NIC received that
	// carries bytes (Raw), descriptor and bytes, once it is done with it,
	// which is when Receive returns: the NIC keeps nothing it received,
	// so its driver may reuse both.
	ReturnRx func(p *wire.Packet)
	// DataDSCP marks data (default 26); data is sent ECT(0).
	DataDSCP uint8
	// AckDSCP marks ACKs, NAKs and SACKs (default 26, like data).
	AckDSCP uint8
	// CNPDSCP marks CNPs (default 48).
	CNPDSCP uint8
	// CtrlDSCP marks MetaRoCE hello and credit packets (default 48).
	CtrlDSCP uint8
	// TrimDSCP is the DSCP of a packet a switch trimmed (default 63).
	TrimDSCP uint8
	// DSCPToPrio maps a DSCP to the PFC priority the NIC sends it on; nil
	// uses the switch model's default map (26 → 3, 48 → 6, else 0).
	DSCPToPrio *[64]uint8
	// CNPInterval is the least time between two CNPs for one QP (per path
	// for multipath QPs) (default 50 µs).
	CNPInterval clock.Duration
	// CC is the congestion-control registry QPs pick their algorithm from.
	CC *cc.Registry
	// CCParams are passed to every controller built.
	CCParams map[string]string
	// CreditReceiver names the receiver-driven algorithm whose cc.Receiver
	// the NIC hosts for incoming credit requests (default "credit").
	CreditReceiver string
	// Mutant breaks requirements on purpose: set only by the compliance
	// suite's mutation test (see Mutant).
	Mutant Mutant
	// Descriptors is where the NIC takes the descriptors of the packets it
	// builds and gives back those it receives. NICs that run on one
	// scheduler may share one (a simulation shares one per engine, so the
	// descriptor one NIC received a moment ago, still in cache, carries
	// the next packet another sends); nil gives the NIC a pool of its own
	// of SpareDescriptors.
	Descriptors *wire.PacketPool
}

// SpareDescriptors is how many received descriptors a NIC keeps for reuse
// when it has a pool of its own (Options.Descriptors).
const SpareDescriptors = 256

func (o *Options) setDefaults() {
	o.LineRate = cmp.Or(o.LineRate, 100*clock.Gbps)
	o.MTU = cmp.Or(o.MTU, 4096)
	o.DataDSCP = cmp.Or(o.DataDSCP, DefaultDataDSCP)
	o.AckDSCP = cmp.Or(o.AckDSCP, 26)
	o.CNPDSCP = cmp.Or(o.CNPDSCP, 48)
	o.CtrlDSCP = cmp.Or(o.CtrlDSCP, 48)
	o.TrimDSCP = cmp.Or(o.TrimDSCP, 63)
	if o.DSCPToPrio == nil {
		m := wire.DefaultDSCPToTC()
		o.DSCPToPrio = &m
	}
	o.CNPInterval = cmp.Or(o.CNPInterval, 50*clock.Microsecond)
	o.CreditReceiver = cmp.Or(o.CreditReceiver, "credit")
}

// NIC is the model of one RDMA NIC port: it serializes frames at line rate,
// schedules QPs round-robin, paces each flow to its congestion control,
// obeys PFC, and is the ECN notification point. It implements wire.Sink on
// its ingress; Attach sets its egress.
type NIC struct {
	// The fields are laid out by cache line for the simulator, where a
	// large fabric's NICs do not fit in cache and each line a packet
	// touches is a miss: sending and receiving a packet read lines 0–2,
	// the options' first two lines and the PFC state's first, and
	// nothing else of the NIC. NICs are allocated on a line (linedNIC;
	// TestNICLayout holds the layout).

	// Line 0: the scheduler, the egress and the last QP.
	sched  clock.Scheduler
	fast   clock.HandlerScheduler // sched's allocation-free path, or nil
	out    wire.Sink
	lastQP *QP          // the QP qp found last (see qp)
	txPkt  *wire.Packet // the frame being serialized

	// Line 1: the transmitter.
	active  []*QP
	spares  *wire.PacketPool // descriptors received and done with (newPacket)
	rr      int
	busy    bool
	kicking bool
	rekick  bool
	// ctrlReady has bit pr set when ctrl[pr] holds frames.
	ctrlReady uint8
	_         [16]byte // the counters start line 2

	// Line 2.
	ctr nicCounters

	opts Options
	pfc  pause.Receiver // the PFC and PAUSE frames received

	rng *rand.Rand
	qps seqtab.Table[*QP] // by QPN
	// retired sums the counters of destroyed QPs (retiredQPs of them).
	retired    qpCounters
	retiredQPs int64
	// shownQPs counts the live QPs that have telemetry rows of their own
	// (at most TelemetryQPRows); the others are summed into one row, with
	// othersGone holding those destroyed (so that row never goes down).
	shownQPs   int
	othersGone qpCounters
	anyOthers  bool
	nextQPN    uint32
	gsi        gsi               // QP1
	mrs        seqtab.Table[*MR] // by key index (see keyIndex)
	nextPD     uint32
	nextKey    uint32
	keySalt    uint8
	nextVA     uint64

	frames   [][]byte // buffers of released frames (frameBuf)
	txDoneFn func()
	ctrl     [8][]*wire.Packet
	wake     clock.Timer
	wakeAt   clock.Time
	wakeFn   func()
	buf      []byte // scratch for MetaRoCE payloads

	creditRx cc.Receiver
}

// linedNIC puts a NIC on a cache line boundary: Go's allocator hands out
// an object of this size with pointers behind an 8-byte header in a size
// class that is a multiple of 64 bytes, so the slot starts a line and the
// NIC starts 64 bytes into it (as switchmodel's ports).
type linedNIC struct {
	_ [56]byte
	NIC
}

var _ wire.Sink = (*NIC)(nil)

// NewNIC returns a NIC with the given options.
func NewNIC(opts Options) (*NIC, error) {
	opts.setDefaults()
	if opts.Sched == nil {
		return nil, errors.New("nic: no scheduler")
	}
	if !opts.IP.IsValid() {
		return nil, fmt.Errorf("nic %q: no IP address", opts.Name)
	}
	if opts.MTU < 256 || opts.MTU > 8192 {
		return nil, fmt.Errorf("nic %q: MTU %d out of [256, 8192]", opts.Name, opts.MTU)
	}
	if opts.Mutant != 0 && !MutantsBuilt {
		return nil, fmt.Errorf("nic %q: mutant %s: %w", opts.Name, opts.Mutant, ErrNoMutants)
	}
	rng := opts.Rand
	if rng == nil {
		var seed uint64
		for _, c := range opts.Name {
			seed = seed*131 + uint64(c)
		}
		rng = rand.New(rand.NewPCG(seed, 0x4e1c))
	}
	n := &new(linedNIC).NIC
	*n = NIC{opts: opts, sched: opts.Sched, rng: rng, spares: opts.Descriptors,
		nextQPN: 0x100 + uint32(rng.IntN(0x1000)), keySalt: uint8(rng.Uint32()), nextVA: 0x7f0000000000}
	if n.spares == nil {
		n.spares = wire.NewPacketPool(SpareDescriptors)
	}
	n.txDoneFn = n.txDone
	n.fast, _ = n.sched.(clock.HandlerScheduler)
	n.wakeFn = func() { n.wake = nil; n.kick() }
	n.pfc.Init(n.sched, opts.LineRate, n.kick)
	return n, nil
}

// Name returns the NIC's name.
func (n *NIC) Name() string { return n.opts.Name }

// Scheduler returns the scheduler the NIC runs on: where what acts on its
// completions schedules (in a partitioned simulation, its engine).
func (n *NIC) Scheduler() clock.Scheduler { return n.sched }

// IP returns the NIC's address.
func (n *NIC) IP() netip.Addr { return n.opts.IP }

// LineRate returns the port's rate.
func (n *NIC) LineRate() clock.Rate { return n.opts.LineRate }

// Attach sets the sink the NIC transmits into (its link toward the switch).
func (n *NIC) Attach(out wire.Sink) { n.out = out }

// Paused reports whether priority prio is paused by PFC now.
func (n *NIC) Paused(prio int) bool { return n.pfc.Paused(prio) }

func (n *NIC) prio(dscp uint8) int { return int(n.opts.DSCPToPrio[dscp&63] & 7) }

// sendCtrl queues a control frame (ACK, NAK, SACK, CNP, credit, hello)
// ahead of data on its priority.
func (n *NIC) sendCtrl(p *wire.Packet) {
	pr := n.prio(p.DSCP)
	n.ctrl[pr] = append(n.ctrl[pr], p)
	n.ctrlReady |= 1 << pr
	n.kick()
}

// activate puts qp among the QPs the scheduler polls for data.
func (n *NIC) activate(qp *QP) {
	if !qp.active {
		qp.active = true
		n.active = append(n.active, qp)
	}
	n.kick()
}

// kick starts the next frame if the port is idle: control frames first
// (highest priority first), then data from the next ready QP in
// round-robin order. If QPs wait only for pacing, it arms a wake-up.
func (n *NIC) kick() {
	if n.kicking {
		n.rekick = true // a QP queued something while being polled
		return
	}
	n.kicking = true
	for {
		n.rekick = false
		n.kickOnce()
		if !n.rekick || n.busy {
			break
		}
	}
	n.kicking = false
}

func (n *NIC) kickOnce() {
	if n.busy || n.out == nil {
		return
	}
	for m := n.ctrlReady; m != 0; {
		pr := 7 - bits.LeadingZeros8(m) // highest priority first
		m &^= 1 << pr
		if n.pfc.Paused(pr) {
			continue
		}
		q := n.ctrl[pr]
		p := q[0]
		q[0] = nil
		n.ctrl[pr] = q[1:]
		if len(n.ctrl[pr]) == 0 {
			n.ctrl[pr] = q[:0]
			n.ctrlReady &^= 1 << pr
		}
		n.transmit(p)
		return
	}
	now := n.sched.Now()
	earliest := clock.Never
	idle := 0
	for k := range len(n.active) {
		i := (n.rr + k) % len(n.active)
		qp := n.active[i]
		if n.pfc.Paused(qp.dataPrio) {
			continue
		}
		p, at := qp.pull(now)
		if p != nil {
			n.rr = i + 1
			n.transmit(p)
			return
		}
		if at == clock.Never {
			qp.idle = true
			idle++
		}
		earliest = min(earliest, at)
	}
	if idle > 0 {
		keep := n.active[:0]
		for _, qp := range n.active {
			if qp.idle {
				qp.idle, qp.active = false, false
				continue
			}
			keep = append(keep, qp)
		}
		clear(n.active[len(keep):])
		n.active = keep
	}
	if earliest != clock.Never && (n.wake == nil || earliest < n.wakeAt) {
		if n.wake != nil {
			n.wake.Stop()
		}
		n.wakeAt = earliest
		n.wake = n.sched.AfterFunc(earliest.Sub(now), n.wakeFn)
	}
}

func (n *NIC) transmit(p *wire.Packet) {
	n.busy = true
	n.txPkt = p
	n.ctr.txPkts++
	n.ctr.txBytes += int64(p.Len)
	if d := n.opts.LineRate.Serialize(wire.OnWireBytes(p.Len)); n.fast != nil {
		n.fast.ScheduleAfter(d, (*nicTx)(n), nil)
	} else {
		n.sched.AfterFunc(d, n.txDoneFn)
	}
}

// nicTx is the Handler of the end-of-transmission event; a separate type
// keeps Handle out of NIC's method set.
type nicTx NIC

// Handle is txDone.
func (h *nicTx) Handle(any) { (*NIC)(h).txDone() }

func (n *NIC) txDone() {
	p := n.txPkt
	n.txPkt, n.busy = nil, false
	n.out.Receive(p)
	n.kick()
}

var _ wire.ReceivePrefetcher = (*NIC)(nil)

// PrefetchReceive asks for the NIC's lines Receive reads first beside the
// packet: line 0 (the last QP) and line 2 (the counters)
// (wire.ReceivePrefetcher).
func (n *NIC) PrefetchReceive(*wire.Packet) {
	prefetch.Line(unsafe.Pointer(&n.sched))
	prefetch.Line(unsafe.Pointer(&n.ctr))
}

// Receive takes a frame from the network. The descriptor is the NIC's
// from then on: it may reuse it for a packet it sends (newPacket), so the
// caller must not touch it after Receive returns.
func (n *NIC) Receive(p *wire.Packet) {
	n.receive(p)
	if p.Raw != nil && n.opts.ReturnRx != nil {
		n.opts.ReturnRx(p)
		return
	}
	p.Raw = nil // the bytes are not reused: their owner may want them back
	n.spares.Put(p)
}

func (n *NIC) receive(p *wire.Packet) {
	n.ctr.rxPkts++
	n.ctr.rxBytes += int64(p.Len)
	switch p.Kind {
	case wire.KindPFC:
		if n.mut(MutIgnorePFC) {
			return
		}
		n.pfc.Receive(p)
		return
	case wire.KindPause:
		n.pfc.Receive(p)
		return
	case wire.KindCNP:
		n.ctr.cnpRx++
		if qp := n.qp(p.DestQP); qp != nil {
			qp.onCNP(p)
		}
		return
	case wire.KindRoCE:
	default:
		n.ctr.rxOther++
		return
	}
	trimmed := p.DSCP == n.opts.TrimDSCP
	if n.opts.Raw && p.Raw != nil && !trimmed && !n.mut(MutAcceptBadICRC) {
		if err := p.VerifyICRC(); err != nil {
			n.ctr.badICRC++
			return
		}
	}
	if p.DestQP == cm.GSI {
		n.receiveMAD(p)
		return
	}
	qp := n.qp(p.DestQP)
	if qp == nil {
		n.ctr.noQP++
		return
	}
	qp.receive(p, trimmed)
}

// qp returns the QP numbered qpn, or nil. The last one found is kept: a
// NIC's packets mostly go to the QP the previous one went to, and the
// check costs less than a map probe.
func (n *NIC) qp(qpn uint32) *QP {
	if qp := n.lastQP; qp != nil && qp.qpn == qpn {
		return qp
	}
	qp, _ := n.qps.Get(qpn)
	if qp != nil {
		n.lastQP = qp
	}
	return qp
}

// PausedTime returns how long priority prio has been paused in total.
func (n *NIC) PausedTime(prio int) clock.Duration { return n.pfc.PausedTime(prio) }

// creditReceiver returns the NIC's receiver-driven controller, built on
// first use (nil when the registry lacks the algorithm).
func (n *NIC) creditReceiver() cc.Receiver {
	if n.creditRx != nil || n.opts.CC == nil {
		return n.creditRx
	}
	alg, err := n.opts.CC.Get(n.opts.CreditReceiver)
	if err != nil {
		return nil
	}
	rx, err := alg.NewReceiver(cc.Env{Sched: n.sched, LineRate: n.opts.LineRate, MTU: n.opts.MTU,
		Params: n.opts.CCParams, SendGrant: n.sendGrant})
	if err != nil || rx == nil {
		return nil
	}
	n.creditRx = rx
	return rx
}

// sendGrant turns a receiver grant into a credit packet; Flow is the local
// QPN << 8 | the sender's path index.
func (n *NIC) sendGrant(g cc.Grant) {
	qp, _ := n.qps.Get(g.Flow >> 8)
	if qp == nil || qp.state == StateError {
		return
	}
	qp.sendCredit(metaroce.OpCreditGrant, g.Flow&0xFF, g.Bytes)
}

// DefaultDataDSCP is the DSCP of data packets when Options.DataDSCP is 0.
const DefaultDataDSCP = 26

// NextQPN returns the number the NIC's next QP will get (numbers are
// handed out in sequence from a first one drawn from the NIC's random
// stream): a flow-level simulator numbers its QPs as the NIC would.
func (n *NIC) NextQPN() uint32 { return (n.nextQPN + 1) & psnMask }
