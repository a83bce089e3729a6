package deploy

import (
	"fmt"
	"runtime"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/lab/emulation/control/nodeplan"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
	"github.com/rocelab/rocelab/topologies"
)

// DefaultCapacityPPSPerCPU is the forwarding capacity AutoScale assumes
// per CPU, in frames per second through one hop (read, model, write): the
// lab's lossless capacity as `rocelab demo --capacity` measures it,
// derated by a margin. The figures it rests on are in docs/performance.md,
// "Measurements from package docs", deploy.
const DefaultCapacityPPSPerCPU = 100_000

// MinAutoScale is the smallest k `scale: auto` picks, however small the
// fabric: the node loops' lateness is milliseconds of wall clock on a busy
// host, and below k = 1000 that becomes tens of microseconds of fabric
// time, enough to cost a short incast a share of its goodput
// (docs/performance.md, "Measurements from package docs", deploy).
const MinAutoScale = 1000

// DefaultGroupCapacityPPS is the capacity AutoScale assumes for a lab
// whose nodes all run in one group (Options.NodeGroups 1, its links in
// memory: emu.Options.InLoopLinks), for the whole lab rather than per
// CPU, since one group is one loop on one CPU. Such a lab loses nothing
// to its loop's lateness (every link is exact), so what bounds its k is
// whether the loop keeps up with the wall clock, which `rocelab demo
// --capacity` (one group, demo.Probe.OnTime) measures; derated by a margin
// (docs/performance.md, "Measurements from package docs", deploy).
const DefaultGroupCapacityPPS = 1_900_000

// MinGroupAutoScale is the smallest k `scale: auto` picks for a lab in
// one group: MinAutoScale guards links between loops, which such a lab
// has none of; the floor left is the smallest k the capacity search
// probes.
const MinGroupAutoScale = 100

// ethHeader is the Ethernet header a frame adds to an IP packet.
const ethHeader = 14

// AutoScale picks the scale factor k for t on a machine that forwards
// capacityPPS frames per second: the aggregate back-end rate at full load
// (both directions of every BE link; the FE when there is no BE) in frames
// of the largest BE MTU, divided by capacityPPS, rounded up
// (emu.AutoScale), and at least MinAutoScale. A topology without links
// gets 1.
func AutoScale(t *topologies.Topology, capacityPPS float64) int {
	return autoScale(t, capacityPPS, MinAutoScale)
}

// AutoScaleOneGroup is AutoScale for a lab whose nodes all run in one
// node group with their links in memory (Options.NodeGroups 1): floored
// at MinGroupAutoScale, not MinAutoScale.
func AutoScaleOneGroup(t *topologies.Topology, capacityPPS float64) int {
	return autoScale(t, capacityPPS, MinGroupAutoScale)
}

// autoScale is AutoScale with the floor given.
func autoScale(t *topologies.Topology, capacityPPS float64, floor int) int {
	agg, mtu := fullLoad(t)
	if agg == 0 {
		return 1
	}
	return max(emu.AutoScale(agg, mtu+ethHeader, capacityPPS), floor)
}

// OneLoop reports whether o runs every node of a lab on one loop whose
// links are all in memory: one node group, links not through sockets
// (scaled from DefaultGroupCapacityPPS).
func (o Options) OneLoop() bool { return o.NodeGroups == 1 && !o.SocketLinks }

// LagBudget is the stall of a node loop the lab's switches size their PFC
// headroom for (nodeplan.Switch): nodeplan.LagBudget, or 0 for a lab on
// one loop, where every link is memory and a pause reaches the upstream
// model at its fabric time however late the loop runs.
func (o Options) LagBudget() time.Duration {
	if o.OneLoop() {
		return 0
	}
	return nodeplan.LagBudget
}

// PickScale is the scale factor k deploy runs o.Topology at when
// o.Scale is 0 (auto), and what it says of it (Lab.ScaleBasis):
// AutoScale of o.CapacityPPS, else DefaultCapacityPPSPerCPU per CPU here;
// for a lab on one loop, AutoScaleOneGroup of o.CapacityPPS, else
// DefaultGroupCapacityPPS. `rocelab run --sim --match-emulation` picks
// its scale with it too.
func (o Options) PickScale() (k int, basis string) {
	c, src, pick := o.CapacityPPS, "the capacity given", AutoScale
	switch {
	case o.OneLoop():
		pick = AutoScaleOneGroup
		if c <= 0 {
			c, src = DefaultGroupCapacityPPS, fmt.Sprintf("DefaultGroupCapacityPPS %d: one node group, measured with rocelab demo --capacity --node-groups 1", DefaultGroupCapacityPPS)
		}
	case c <= 0:
		c = DefaultCapacityPPSPerCPU * float64(runtime.NumCPU())
		src = fmt.Sprintf("DefaultCapacityPPSPerCPU %d × %d CPUs, measured with rocelab demo --capacity", DefaultCapacityPPSPerCPU, runtime.NumCPU())
	}
	return pick(o.Topology, c), fmt.Sprintf("auto: %.0f frames/s at full load ÷ %.0f frames/s (%s)", FabricPPS(o.Topology), c, src)
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
