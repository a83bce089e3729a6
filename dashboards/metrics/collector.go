// Package metrics exports a lab's telemetry to Prometheus: one Collector
// that reads every node at scrape time (as node_exporter's collectors do,
// not counters mirrored into a second registry) and maps the models'
// samples onto metric names and labels that follow the RoCE exporters and
// switch OSes operators already read: PFC pause frames and pause duration
// per priority and direction (rdma_exporter, SONiC PFC_n_RX/TX_PAUSE_*),
// the RDMA hw_counters of a NIC (np_cnp_sent, rp_cnp_handled, …), SONiC's
// PFC watchdog statistics. Everything is in base units (bytes, seconds,
// real fabric units under time dilation), counters end in _total, and no
// rate is pre-computed. docs/metrics.md lists every family.
package metrics

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// readTimeout is how long a scrape waits for the lab to be read.
const readTimeout = 5 * time.Second

// Collector is a prometheus.Collector over a Source.
type Collector struct {
	src   Source
	log   *slog.Logger
	descs map[*family]*prometheus.Desc
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a collector that reads src at every scrape, giving
// up on a read after readTimeout (5 s). log (nil: discard) hears of lab
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
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
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

// Convert maps a Reading onto the exported families. Samples that several
// model objects emit under one set of exported labels (a NIC's counters
// summed over its QPs) are added up.
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
			add(famPortSpeed, []string{n.Name, p.Name}, float64(p.Rate)*bitsToBytes)
		}
		add(famFaultsLive, []string{n.Name}, float64(len(n.Faults)))
		for _, s := range n.Samples {
			if s.Name != "nic_tx_bytes_total" {
				continue
			}
			// A NIC's hw_counters exist from the start, summed over
			// whatever QPs it has (none yet: zero).
			if labels, ok := nicL(n, s); ok {
				for _, f := range nicSums {
					add(f, labels, 0)
				}
			}
		}
		for _, s := range n.Samples {
			for _, ru := range rules[s.Name] {
				labels, ok := ru.labels(n, s)
				if !ok {
					continue
				}
				v := s.Value
				if ru.scale != 0 {
					v *= ru.scale
				}
				add(ru.fam, labels, v)
			}
		}
	}
	return out
}

// Families returns every exported family's name (with the rocelab_
// prefix), help and type, for docs and tests.
func Families() []FamilyInfo {
	out := make([]FamilyInfo, 0, len(families))
	for _, f := range families {
		out = append(out, FamilyInfo{Name: "rocelab_" + f.name, Help: f.help, Type: typeName(f.typ), Labels: append([]string{"lab"}, f.labels...)})
	}
	return out
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
