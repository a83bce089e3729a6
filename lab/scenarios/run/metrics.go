package run

import (
	"slices"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/fct"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/wire"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
	"github.com/rocelab/rocelab/lab/scenarios/scenario/expect"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
)

// Metrics is what a simulated run measured, as expectations read it
// (expect.Metrics): the telemetry snapshots, with the series of the
// gauges the sampler recorded (queue depths, pause states) replaced by the
// sampler's finer readings — each point's maximum, so no peak is lost to
// downsampling.
type Metrics struct {
	Snapshots expect.Snapshots
	Store     *simlab.Store
}

var _ expect.Metrics = (*Metrics)(nil)

// Lookup implements expect.Metrics.
func (m *Metrics) Lookup(name string, match []telemetry.Label) ([]expect.Series, error) {
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
		ss := expect.Series{Labels: s.Labels}
		for _, p := range s.Points {
			ss.Points = append(ss.Points, expect.Point{At: p.T, Value: p.Max})
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

// emitFCT emits the summary of a distribution of completion times as the
// catalogue's fct metric reads it (expect.Sample.Summary): one
// flow_fct_seconds reading per statistic, labelled stat and labels (the
// job; none for the union of every job).
func emitFCT(emit func(telemetry.Sample), labels []telemetry.Label, d *fct.Dist) {
	st := d.Stats()
	for _, stat := range expect.SummaryStats {
		var v float64
		switch stat {
		case "p50":
			v = d.Quantile(0.50).Seconds()
		case "p90":
			v = d.Quantile(0.90).Seconds()
		case "p99":
			v = d.Quantile(0.99).Seconds()
		case "p999":
			v = d.Quantile(0.999).Seconds()
		case "min":
			v = st.Min.Seconds()
		case "max":
			v = st.Max.Seconds()
		case "avg":
			v = st.Mean.Seconds()
		case "count":
			v = float64(d.Count())
		}
		l := append(slices.Clone(labels), telemetry.Label{Name: "stat", Value: stat})
		emit(telemetry.Sample{Name: "flow_fct_seconds", Kind: telemetry.Gauge, Labels: l, Value: v})
	}
}

// jobFCT is a job's distribution of completion times for its report
// (report.Job.FCT): the one emitFCT summarises, nil when empty.
func jobFCT(d *fct.Dist) *fct.Dist {
	if d.Count() == 0 {
		return nil
	}
	return d
}

// slowdown is a perf flow's completion time (first post to last
// completion) over its ideal: its payload at the line rate of the slower
// of its two NIC links, in full-MTU RoCE frames (headers, ICRC, FCS,
// preamble and gap counted). ok is false before the flow moved data.
func slowdown(res simlab.FlowResult, f scenario.Flow) (float64, bool) {
	if res.Bytes <= 0 || res.End <= res.Start || f.From == nil || f.To == nil {
		return 0, false
	}
	rate, mtu := min(f.From.Rate, f.To.Rate), min(f.From.MTU, f.To.MTU)
	if rate <= 0 || mtu <= 0 {
		return 0, false
	}
	ideal := idealTime(res.Bytes, endpoint.PayloadMTU(mtu), rate)
	if ideal <= 0 {
		return 0, false
	}
	return float64(res.End.Sub(res.Start)) / float64(ideal), true
}

// idealTime is size payload bytes at rate in RoCE frames of mtu payload
// bytes each.
func idealTime(size int64, mtu int, rate clock.Rate) clock.Duration {
	frame := func(n int) clock.Duration {
		return rate.Serialize(wire.OnWireBytes(wire.EthernetLen + wire.IPv4MinLen + wire.UDPLen + wire.BTHLen + n + wire.ICRCLen))
	}
	d := clock.Duration(size/int64(mtu)) * frame(mtu)
	if rest := int(size % int64(mtu)); rest > 0 {
		d += frame(rest)
	}
	return d
}
