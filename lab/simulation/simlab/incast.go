package simlab

import (
	"fmt"
	"math"
	"slices"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
)

// Incast adds an incast job: spec, a Perf job, from every NIC of
// spec.From to receiver. An empty spec.From means every BE NIC but the
// receiver; spec.To and spec.Pairwise must be left unset.
func (l *Lab) Incast(receiver string, spec PerfSpec) (*PerfJob, error) {
	if len(spec.From) == 0 {
		for _, n := range l.nics {
			if n.Name() != receiver {
				spec.From = append(spec.From, n.Name())
			}
		}
	}
	switch {
	case receiver == "":
		return nil, fmt.Errorf("incast %s: no receiver", spec.Name)
	case len(spec.To) > 0 || spec.Pairwise:
		return nil, fmt.Errorf("incast %s: To and Pairwise are the incast's own", spec.Name)
	}
	spec.To = []string{receiver}
	return l.Perf(spec)
}

// IncastReport is what the fidelity check compares between the emulation
// and the simulator for an incast: per-flow throughput, the pauses the
// switches sent, and drops.
type IncastReport struct {
	// PerFlowGbps is each sender's goodput (a sender with several flows
	// in the job counts their sum), keyed by sender NIC name.
	PerFlowGbps map[string]float64
	// TotalGbps is the sum of PerFlowGbps; Fairness is max/min of it (1
	// is perfectly fair; +Inf if a sender got nothing).
	TotalGbps float64
	Fairness  float64
	// PauseFrames is the PFC frames (XOFF and refreshes, XON) every
	// switch sent; PauseTime the total time switch priority groups held
	// their upstream paused (summed over ports and priorities).
	PauseFrames int64
	PauseTime   clock.Duration
	// NICPauseTime is the total time the NICs spent paused by PFC, summed
	// over NICs and priorities.
	NICPauseTime clock.Duration
	// Drops is every packet the switches dropped, all reasons.
	Drops int64
}

// IncastReport builds the report of job j. Switch and NIC counters are
// the lab's totals since Build, so run one incast per lab to compare.
func (l *Lab) IncastReport(j *PerfJob) IncastReport {
	r := IncastReport{PerFlowGbps: map[string]float64{}}
	for _, f := range j.Results() {
		sender := f.From
		if j.write == endpoint.WRRead { // the data flows To → From
			sender = f.To
		}
		r.PerFlowGbps[sender] += f.GoodputGbps
	}
	lo, hi := math.Inf(1), 0.0
	keys := make([]string, 0, len(r.PerFlowGbps))
	for k := range r.PerFlowGbps {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := r.PerFlowGbps[k]
		r.TotalGbps += v
		lo, hi = min(lo, v), max(hi, v)
	}
	switch {
	case len(keys) == 0:
	case lo <= 0:
		r.Fairness = math.Inf(1)
	default:
		r.Fairness = hi / lo
	}
	t := l.fab.Totals()
	r.PauseFrames, r.Drops, r.PauseTime = t.PFCFrames, t.Drops, t.XOffTime
	for _, n := range l.nics {
		for p := range 8 {
			r.NICPauseTime += n.PausedTime(p)
		}
	}
	return r
}
