package simlab

import (
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/wire"
)

// IPHost is the minimal model of a front-end (or storage) NIC: it counts
// what the fabric delivers to it and can send frames, one at a time at the
// port's line rate, for background traffic. It obeys PFC pauses of the
// class its frames use, like every sender in the lab.
type IPHost struct {
	name  string
	sched clock.Scheduler
	port  *topologies.Port
	out   wire.Sink

	queue  []*wire.Packet
	busy   bool
	paused [8]clock.Time // paused until, per priority

	RxPackets, RxBytes int64
	TxPackets, TxBytes int64
	PFCRx              int64
}

var (
	_ wire.Sink        = (*IPHost)(nil)
	_ telemetry.Source = (*IPHost)(nil)
)

func newIPHost(name string, sched clock.Scheduler, p *topologies.Port) *IPHost {
	return &IPHost{name: name, sched: sched, port: p}
}

// Name returns the host NIC's name ("host1:fe0").
func (h *IPHost) Name() string { return h.name }

// Port returns the topology port of the NIC.
func (h *IPHost) Port() *topologies.Port { return h.port }

// Receive counts a frame from the fabric; PFC frames pause the sender.
func (h *IPHost) Receive(p *wire.Packet) {
	if p.Kind == wire.KindPFC {
		h.PFCRx++
		now := h.sched.Now()
		for i := range 8 {
			if p.ClassEnable&(1<<uint(i)) != 0 {
				h.paused[i] = now.Add(wire.PauseTime(h.port.Rate, p.Quanta[i]))
			}
		}
		h.kick()
		return
	}
	h.RxPackets++
	h.RxBytes += int64(p.Len)
}

// Send queues p for transmission (priority from its DSCP by the switch
// model's default map).
func (h *IPHost) Send(p *wire.Packet) {
	h.queue = append(h.queue, p)
	h.kick()
}

func (h *IPHost) kick() {
	if h.busy || len(h.queue) == 0 || h.out == nil {
		return
	}
	p := h.queue[0]
	prio := switchmodel.DefaultConfig().DSCPToTC[p.DSCP&63]
	if until := h.paused[prio]; until > h.sched.Now() {
		h.sched.AfterFunc(until.Sub(h.sched.Now()), h.kick)
		return
	}
	h.queue[0] = nil
	h.queue = h.queue[1:]
	h.busy = true
	h.sched.AfterFunc(h.port.Rate.Serialize(wire.OnWireBytes(p.Len)), func() {
		h.busy = false
		h.TxPackets++
		h.TxBytes += int64(p.Len)
		h.out.Receive(p)
		h.kick()
	})
}

// Collect emits the host NIC's counters, labelled node=name.
func (h *IPHost) Collect(emit func(telemetry.Sample)) {
	l := []telemetry.Label{{Name: "node", Value: h.name}}
	for _, c := range []struct {
		name string
		v    int64
	}{
		{"host_rx_packets_total", h.RxPackets}, {"host_rx_bytes_total", h.RxBytes},
		{"host_tx_packets_total", h.TxPackets}, {"host_tx_bytes_total", h.TxBytes},
		{"host_pfc_rx_total", h.PFCRx},
	} {
		emit(telemetry.Sample{Name: c.name, Kind: telemetry.Counter, Labels: l, Value: float64(c.v)})
	}
}
