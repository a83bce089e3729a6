// Package testbench holds traffic sources and sinks for driving a switch
// model (or anything that is a wire.Sink) in virtual time: a Host that
// sends flows at its line rate and obeys the PFC pauses it receives, and a
// Counter that counts what reaches it. They depend only on
// clock.Scheduler, like the models.
package testbench

import (
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/pause"
)

// Flow is a stream of identical packets a Host sends.
type Flow struct {
	// Template is copied for every packet; the copy's PSN is the packet's
	// sequence number in the flow (0, 1, 2…).
	Template wire.Packet
	// Count is how many packets to send; negative sends forever.
	Count int64
	// Priority is the PFC priority the host sends the flow on (the
	// priority a pause must name to stop it).
	Priority int
	// Start is the earliest time of the first packet.
	Start clock.Time
	// Rate paces the flow (0: as fast as the host's line rate allows).
	Rate clock.Rate

	// Sent counts the packets sent so far.
	Sent int64
	next clock.Time
}

func (f *Flow) done() bool { return f.Count >= 0 && f.Sent >= f.Count }

// Host is a NIC stand-in: one port that transmits its flows one frame at a
// time at its line rate (frames take wire.OnWireBytes on the wire),
// round-robin among the flows that are ready and whose priority is not
// paused. On its receive side it obeys PFC (each enabled priority stops
// for quanta × 512 bit times at the host's rate, or resumes on 0) and
// counts every other frame.
type Host struct {
	Name string
	// Counter counts the non-PFC frames the host receives.
	Counter

	sched clock.Scheduler
	rate  clock.Rate
	out   wire.Sink
	flows []*Flow
	rr    int
	ctrl  []*wire.Packet

	busy   bool
	tx     *wire.Packet
	wake   clock.Timer
	wakeAt clock.Time
	doneFn func()

	// Sent and SentBytes count the data frames transmitted.
	Sent, SentBytes int64
	// Pauses obeys the PFC and PAUSE frames received; its Frames and
	// Ended count them and the time of the ended pauses, per priority.
	Pauses pause.Receiver
}

var _ wire.Sink = (*Host)(nil)

// NewHost returns a host of the given line rate that transmits into out.
func NewHost(name string, sched clock.Scheduler, rate clock.Rate, out wire.Sink) *Host {
	h := &Host{Name: name, sched: sched, rate: rate, out: out}
	h.doneFn = h.txDone
	h.Pauses.Init(sched, rate, h.kick)
	return h
}

// SetOut sets what the host transmits into.
func (h *Host) SetOut(out wire.Sink) { h.out = out }

// AddFlow adds f and starts sending it.
func (h *Host) AddFlow(f *Flow) *Flow {
	f.next = f.Start
	h.flows = append(h.flows, f)
	h.kick()
	return f
}

// SendControl transmits p ahead of any data (after the frame on the wire),
// ignoring pauses: for PFC frames a test injects.
func (h *Host) SendControl(p *wire.Packet) {
	h.ctrl = append(h.ctrl, p)
	h.kick()
}

// Paused reports whether priority prio is paused now.
func (h *Host) Paused(prio int) bool { return h.Pauses.Paused(prio) }

// Receive takes a frame from the network.
func (h *Host) Receive(p *wire.Packet) {
	switch p.Kind {
	case wire.KindPFC, wire.KindPause:
		h.Pauses.Receive(p)
	default:
		h.Counter.Receive(p)
	}
}

// kick starts the next frame if the host is idle: control frames first,
// then the next ready flow in round-robin order; if flows wait only for
// their start or pacing time, it arms a wake-up.
func (h *Host) kick() {
	if h.busy || h.out == nil {
		return
	}
	var p *wire.Packet
	if len(h.ctrl) > 0 {
		p = h.ctrl[0]
		h.ctrl = h.ctrl[1:]
	} else {
		p = h.nextData()
		if p == nil {
			return
		}
		h.Sent++
		h.SentBytes += int64(p.Len)
	}
	h.busy = true
	h.tx = p
	h.sched.AfterFunc(h.rate.Serialize(wire.OnWireBytes(p.Len)), h.doneFn)
}

func (h *Host) txDone() {
	p := h.tx
	h.tx = nil
	h.busy = false
	h.out.Receive(p)
	h.kick()
}

func (h *Host) nextData() *wire.Packet {
	now := h.sched.Now()
	earliest := clock.Never
	n := len(h.flows)
	for k := range n {
		i := (h.rr + k) % n
		f := h.flows[i]
		if f.done() || h.Pauses.Paused(f.Priority) {
			continue
		}
		if f.next > now {
			earliest = min(earliest, f.next)
			continue
		}
		h.rr = (i + 1) % n
		p := new(wire.Packet)
		*p = f.Template
		p.PSN = uint32(f.Sent) & 0xFFFFFF
		f.Sent++
		if f.Rate > 0 {
			f.next = max(f.next, now).Add(f.Rate.Serialize(wire.OnWireBytes(p.Len)))
		}
		return p
	}
	if earliest != clock.Never && (h.wake == nil || earliest < h.wakeAt) {
		if h.wake != nil {
			h.wake.Stop()
		}
		h.wakeAt = earliest
		h.wake = h.sched.AfterFunc(earliest.Sub(now), func() {
			h.wake = nil
			h.kick()
		})
	}
	return nil
}
