package deploy

import (
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/lab/emulation/emu"
	"github.com/rocelab/rocelab/topologies"
)

// DefaultCapacityPPSPerCPU is the forwarding capacity AutoScale assumes
// per CPU, in frames per second through one hop (read, model, write),
// derated so that bursts and timer jitter stay small in fabric time. At
// 50,000 the laptop demo's 4:1 incast (k = 3776 on 2 CPUs) lost 118
// packets on the lossless class — pause frames arrived late in fabric time
// because the loops lagged — while at 20,000 (k ≈ 9440) it lost none.
const DefaultCapacityPPSPerCPU = 20_000

// ethHeader is the Ethernet header a frame adds to an IP packet.
const ethHeader = 14

// AutoScale picks the dilation factor k for t on a machine that forwards
// capacityPPS frames per second: the aggregate back-end rate at full load
// (both directions of every BE link; the FE when there is no BE) in frames
// of the largest BE MTU, divided by capacityPPS, rounded up
// (emu.AutoScale). A topology without links gets 1.
func AutoScale(t *topologies.Topology, capacityPPS float64) int {
	agg, mtu := fullLoad(t)
	if agg == 0 {
		return 1
	}
	return emu.AutoScale(agg, mtu+ethHeader, capacityPPS)
}

// FabricPPS is the frame rate of t at full load in real time, as
// AutoScale counts it: a lab at scale k must forward FabricPPS/k frames
// per second of wall clock.
func FabricPPS(t *topologies.Topology) float64 {
	agg, mtu := fullLoad(t)
	return emu.FramesPerSecond(agg, mtu+ethHeader)
}

// fullLoad returns the aggregate rate AutoScale fits (both directions of
// every link of the back end, or of the front end when there is no back
// end) and the largest MTU of those links.
func fullLoad(t *topologies.Topology) (clock.Rate, int) {
	plane := topologies.BE
	if t.Summary().BELinks == 0 {
		plane = topologies.FE
	}
	var agg clock.Rate
	mtu := 0
	for _, l := range t.Links {
		if l.Plane != plane {
			continue
		}
		agg += 2 * l.Rate
		mtu = max(mtu, l.MTU)
	}
	return agg, mtu
}
