package run

import (
	"slices"
	"strings"

	"github.com/rocelab/rocelab/lab/scenario"
	"github.com/rocelab/rocelab/lab/simlab"
	"github.com/rocelab/rocelab/lab/telemetry"
)

// Metrics is what a simulated run measured, as expectations read it
// (scenario.Metrics): the telemetry snapshots, with the series of the
// gauges the sampler recorded (queue depths, pause states) replaced by the
// sampler's finer readings — each point's maximum, so no peak is lost to
// downsampling.
type Metrics struct {
	Snapshots scenario.Snapshots
	Store     *simlab.Store
}

var _ scenario.Metrics = (*Metrics)(nil)

// Lookup implements scenario.Metrics.
func (m *Metrics) Lookup(name string, match []telemetry.Label) ([]scenario.Series, error) {
	out, err := m.Snapshots.Lookup(name, match)
	if err != nil || m.Store == nil {
		return out, err
	}
	sampled := m.Store.Find(name, match...)
	if len(sampled) == 0 {
		return out, nil
	}
	index := map[string]int{}
	for i, s := range out {
		index[labelKey(s.Labels)] = i
	}
	for _, s := range sampled {
		if s.Kind != telemetry.Gauge {
			continue
		}
		ss := scenario.Series{Labels: s.Labels}
		for _, p := range s.Points {
			ss.Points = append(ss.Points, scenario.Point{At: p.T, Value: p.Max})
		}
		if i, ok := index[labelKey(s.Labels)]; ok {
			out[i] = ss
		} else {
			out = append(out, ss)
		}
	}
	return out, nil
}

// labelKey is labels in a canonical order.
func labelKey(l []telemetry.Label) string {
	parts := make([]string, len(l))
	for i, x := range l {
		parts[i] = x.Name + "=" + x.Value
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}
