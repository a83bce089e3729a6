package run

import (
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/control/nodeplan"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/topologies"
)

// PerfTxDepth is the messages each QP of a perf workload keeps posted
// (a latency test: 1), in both drivers. The scenario format has no key
// for it; it is passed explicitly because the endpoint node's perf job
// and simlab default to different depths (128 and 32). 32 messages of
// 256 KB are 8 MB still queued per QP when a timed job's time is up.
const PerfTxDepth = 32

// Grace periods in wall-clock time, as the emulation allows them: a timed
// perf job may drain its queued messages for at least perfGraceWall after
// the run's end, any other job run at least jobsGraceWall past it (both
// also get a multiple of the run's duration: emuGrace).
const (
	perfGraceWall = time.Second
	jobsGraceWall = 30 * time.Second
)

// emulatedLab is the deploy an emulated run of sc with opts makes, as
// far as the scale and the switches' configuration go: the topology,
// the scale asked for (opts.Scale, else the scenario's fixed factor, else
// 0: auto) and the lab's shape. Emulate deploys with it; Sim with
// MatchEmulation plans its switches from it.
func emulatedLab(sc *scenario.Scenario, opts Options) deploy.Options {
	o := deploy.Options{Topology: sc.Topology, Scale: opts.Scale, NodeGroups: opts.NodeGroups, SocketLinks: opts.SocketLinks}
	if o.Scale <= 0 && !sc.Scale.Auto {
		o.Scale = sc.Scale.Factor
	}
	return o
}

// emulationScale is the scale k the emulated run that o deploys
// uses: o.Scale if > 0, else what deploy picks for the topology and the
// lab's shape on this machine (scale: auto; deploy.Options.PickScale).
func emulationScale(o deploy.Options) int {
	if o.Scale > 0 {
		return o.Scale
	}
	k, _ := o.PickScale()
	return k
}

// emulatedSwitches returns a fabric Configure hook that gives every switch
// the configuration the emulation's switch process runs at scale
// (nodeplan.Switch: the PFC headroom includes the allowance for loop
// stalls, lag: deploy.Options.LagBudget). The first error is stored in
// *errp.
func emulatedSwitches(scale int, seed uint64, lag time.Duration, errp *error) func(*topologies.Node, *switchmodel.Config) {
	return func(n *topologies.Node, c *switchmodel.Config) {
		cfg, err := nodeplan.Switch(n, nil, scale, seed, "/unused.sock", lag)
		if err != nil {
			if *errp == nil {
				*errp = err
			}
			return
		}
		*c = *cfg.Switch
	}
}

// perfDepth is the tx depth of perf workload w's QPs.
func perfDepth(w *scenario.Workload) int {
	if w.Latency {
		return 1
	}
	return PerfTxDepth
}

// drainTime is how long the messages perf workload w's QPs still have
// queued when its time is up take, at least, to cross its busiest NIC
// link: every QP's tx depth of messages, summed over the flows through
// each NIC, at the NIC's line rate.
func drainTime(w *scenario.Workload, flows []scenario.Flow) clock.Duration {
	bytes := map[*topologies.Port]int64{}
	per := int64(max(w.QPs, 1)) * int64(perfDepth(w)) * w.Size
	for _, f := range flows {
		bytes[f.From] += per
		bytes[f.To] += per
	}
	var d clock.Duration
	for p, b := range bytes {
		if p.Rate > 0 {
			d = max(d, p.Rate.Serialize(int(b)))
		}
	}
	return d
}

// emuGrace is how long past the run's end (fabric time) the emulation lets
// a workload go on before it stops it: a timed perf job its queued
// messages' drain twice over, at least the run's duration and
// perfGraceWall; anything else twice the duration, at least jobsGraceWall.
// Sim with Options.MatchEmulation goes on as long.
func emuGrace(sc *scenario.Scenario, w *scenario.Workload, flows []scenario.Flow, scale int) clock.Duration {
	wallToFabric := func(d time.Duration) clock.Duration {
		return clock.Duration(d.Nanoseconds()) * clock.Nanosecond / clock.Duration(max(scale, 1))
	}
	if w.Kind == scenario.KindPerf && w.Duration > 0 {
		return max(2*drainTime(w, flows), sc.Duration, wallToFabric(perfGraceWall))
	}
	return max(2*sc.Duration, wallToFabric(jobsGraceWall))
}
