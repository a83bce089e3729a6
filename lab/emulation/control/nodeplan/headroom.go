package nodeplan

import (
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/topologies"
)

// LagBudget is the wall-clock stall of a node loop that the emulation's
// PFC headroom absorbs. A switch decides to pause at its fabric time, but
// an upstream node whose loop the host scheduler kept waiting learns of the
// pause late and keeps sending for the stall divided by the scale factor;
// on a busy two-core machine loops stalled for up to ~100 ms. Deliberate
// departure from the simulator (see lagHeadroom): a stall is a longer
// cable as far as headroom is concerned.
//
// A lab whose nodes all share one loop, its links in memory
// (deploy.Options.OneLoop), needs none: a pause reaches the upstream
// model at the fabric time it was sent plus the cable's delay however
// late the loop runs, as in the simulator, so its switches are planned
// with a lag of 0 and keep the profile's headroom.
const LagBudget = 100 * time.Millisecond

// lagHeadroom returns the per-PG headroom of an emulated switch: what the
// model would size for its slowest-to-react port if every cable were
// longer by lag/scale of fabric time, capped so that headroom and
// reserves take at most half of the buffer. It returns 0 (keep the
// converted sizing) when the profile fixes headroom (auto false), has no
// lossless class, or lag is 0.
func lagHeadroom(sc *switchmodel.Config, ports []*topologies.Port, auto bool, scale int, lag time.Duration) int64 {
	pfc := &sc.PFC
	if !auto || pfc.LosslessPriorities == 0 || scale <= 0 || len(ports) == 0 || lag <= 0 {
		return 0
	}
	extra := clock.Duration(int64(lag) * int64(clock.Nanosecond) / int64(scale))
	var h int64
	for _, p := range ports {
		h = max(h, switchmodel.HeadroomFor(p.Rate, p.Delay+extra, sc.MTU))
	}
	pgs := int64(len(ports)) * int64(pfc.LosslessPriorities.Len())
	limit := (sc.BufferBytes/2 - int64(len(ports))*switchmodel.NumTC*pfc.Reserved) / pgs
	if limit <= 0 {
		return 0
	}
	return min(h, limit)
}
