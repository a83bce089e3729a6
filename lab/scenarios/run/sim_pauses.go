package run

import (
	"strconv"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/topologies"
)

// pauseProbes read the pause-time counters of the lossless classes (the
// classes the sampler records pause states of) with every reading:
// switch_pg_xoff_seconds_total{node,port,pg},
// switch_queue_paused_seconds_total{node,port,tc} and
// nic_paused_seconds_total{node,prio}, the samples the summary's pause
// times are the final values of. The report draws the PFC timeline from
// them (report.Pauses), so that its bands add up to the summary's times
// whatever the sampling interval; a 0/1 state read every interval
// misses, or stretches to a whole interval, every pause shorter than it.
func pauseProbes(l *simlab.Lab) []simlab.Probe {
	tcs := losslessTCs(l.Topology())
	var out []simlab.Probe
	add := func(name string, labels []telemetry.Label, read func() float64) {
		out = append(out, simlab.Probe{Name: name, Labels: labels, Kind: telemetry.Counter, Read: read})
	}
	for _, sw := range l.Fabric().Switches() {
		for i := range sw.NumPorts() {
			pt := sw.Port(i)
			pl := []telemetry.Label{{Name: "node", Value: sw.Name()}, {Name: "port", Value: strconv.Itoa(i)}}
			for _, tc := range tcs {
				c := strconv.Itoa(tc)
				add("switch_pg_xoff_seconds_total", telemetry.With(pl, telemetry.Label{Name: "pg", Value: c}),
					func() float64 { return pt.PG(tc).XOffTime.Seconds() })
				add("switch_queue_paused_seconds_total", telemetry.With(pl, telemetry.Label{Name: "tc", Value: c}),
					func() float64 { return pt.Queue(tc).PausedTime.Seconds() })
			}
		}
	}
	for _, n := range l.NICs() {
		for _, tc := range tcs {
			add("nic_paused_seconds_total", []telemetry.Label{{Name: "node", Value: n.Name()}, {Name: "prio", Value: strconv.Itoa(tc)}},
				func() float64 { return n.PausedTime(tc).Seconds() })
		}
	}
	return out
}

// losslessTCs are the classes some switch profile of t makes lossless (3
// if none), as the sampler picks them.
func losslessTCs(t *topologies.Topology) []int {
	var out []int
	for tc := range topologies.NumTC {
		for _, p := range t.Profiles {
			if p.PFC.Lossless[tc] {
				out = append(out, tc)
				break
			}
		}
	}
	if len(out) == 0 {
		out = []int{3}
	}
	return out
}
