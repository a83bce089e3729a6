// Package metrics exports a lab's telemetry to Prometheus: one Collector
// that reads every node at scrape time (as node_exporter's collectors do,
// not counters mirrored into a second registry). A family is a model's
// sample under its own name with "rocelab_" before it, so `rocelab stats`,
// scenario files and Grafana say the same words; the exporter adds the lab
// label, splits an endpoint's host:nic, names ports as the topology does,
// and adds three facts of its own (node_up, port speeds, live faults).
// Everything is in base units (bytes, seconds, real fabric units at any
// scale k), counters end in _total, and no rate is pre-computed.
// docs/metrics.md lists every family with the SONiC statistic or RDMA
// hw_counter an operator knows it by.
package metrics

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ReadTimeout is how long a scrape waits for the lab to be read.
const ReadTimeout = 5 * time.Second

// Collector is a prometheus.Collector over a Source.
type Collector struct {
	src   Source
	log   *slog.Logger
	descs map[*family]*prometheus.Desc
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a collector that reads src at every scrape, giving
// up on a read after ReadTimeout (5 s). log (nil: discard) hears of lab
// reads that fail.
func NewCollector(src Source, log *slog.Logger) *Collector {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Collector{src: src, log: log, descs: map[*family]*prometheus.Desc{}}
	for _, f := range families {
		c.descs[f] = prometheus.NewDesc("rocelab_"+f.name, f.help, append([]string{"lab"}, f.labels...), nil)
	}
	return c
}

// Describe sends every family's description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range families {
		ch <- c.descs[f]
	}
}

// Collect reads the lab and sends every metric.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), ReadTimeout)
	defer cancel()
	r, err := c.src.Read(ctx)
	if err != nil {
		c.log.Warn("read lab", "err", err)
		return
	}
	for _, m := range Convert(r) {
		ch <- prometheus.MustNewConstMetric(c.descs[m.fam], m.fam.typ, m.Value, m.Labels...)
	}
}

// Metric is one exported value: its family and label values (lab first).
type Metric struct {
	fam    *family
	Labels []string
	Value  float64
}

// Name returns the metric's full name.
func (m Metric) Name() string { return "rocelab_" + m.fam.name }

// Convert maps a Reading onto the exported families. Samples that come out
// under one set of exported labels (none should) are added up rather than
// sent twice, which Prometheus refuses.
func Convert(r Reading) []Metric {
	var out []Metric
	index := map[string]int{}
	add := func(f *family, labels []string, v float64) {
		labels = append([]string{r.Lab}, labels...)
		key := f.name + "\x00" + strings.Join(labels, "\x00")
		if i, ok := index[key]; ok {
			out[i].Value += v
			return
		}
		index[key] = len(out)
		out = append(out, Metric{fam: f, Labels: labels, Value: v})
	}
	for i := range r.Nodes {
		n := &r.Nodes[i]
		up := 0.0
		if n.Up {
			up = 1
		}
		add(famUp, []string{n.Name, n.Kind}, up)
		if !n.Up {
			continue
		}
		for _, p := range n.Ports {
			add(famPortSpeed, []string{n.Name, p.Name}, float64(p.Rate)/8)
		}
		add(famFaultsLive, []string{n.Name}, float64(len(n.Faults)))
		for _, s := range n.Samples {
			f := bySample[s.Name]
			if f == nil {
				continue
			}
			if labels, ok := f.from(n, s); ok {
				add(f, labels, s.Value)
			}
		}
	}
	return out
}

// Families returns every exported family's name (with the rocelab_
// prefix), help and type, for docs and tests: the lab's, then
// rocelab_build_info (NewBuildInfoCollector), which has no lab label.
func Families() []FamilyInfo {
	out := make([]FamilyInfo, 0, len(families))
	for _, f := range families {
		out = append(out, FamilyInfo{Name: "rocelab_" + f.name, Help: f.help, Type: typeName(f.typ), Labels: append([]string{"lab"}, f.labels...)})
	}
	return append(out, FamilyInfo{Name: BuildInfoName, Help: "1, labeled with the serving binary's build.", Type: "gauge", Labels: []string{"version", "revision", "goversion"}})
}

// FamilyInfo describes one exported family.
type FamilyInfo struct {
	Name, Help, Type string
	Labels           []string
}

func typeName(t prometheus.ValueType) string {
	if t == prometheus.CounterValue {
		return "counter"
	}
	return "gauge"
}
