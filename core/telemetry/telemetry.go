// Package telemetry is the one interface through which every model exposes
// its counters and gauges: stats, Prometheus, the web view, reports and
// scenario expectations all read the same numbers through it.
//
// Models keep plain integer fields on their hot paths and pay nothing for
// telemetry; a reader calls Collect, which walks those fields and emits a
// Sample for each. Names are snake_case without a prefix; counters end in
// _total, byte counts say bytes. A sample's name is the one word for its
// counter everywhere: the Prometheus exporter (dashboards/metrics) exports
// it as "rocelab_" + name, and `rocelab stats -o json` keys it by name.
package telemetry

import (
	"sort"
	"strings"
)

// Kind tells a counter (only grows) from a gauge (goes up and down).
type Kind uint8

// Kinds of samples.
const (
	Counter Kind = iota
	Gauge
)

func (k Kind) String() string {
	if k == Gauge {
		return "gauge"
	}
	return "counter"
}

// Label is one name=value pair of a sample, e.g. node=rtsw1, port=3, tc=3.
type Label struct {
	Name, Value string
}

// Sample is one reading.
type Sample struct {
	Name   string
	Kind   Kind
	Labels []Label
	Value  float64
}

// Label returns the value of the named label, or "".
func (s Sample) Label(name string) string {
	for _, l := range s.Labels {
		if l.Name == name {
			return l.Value
		}
	}
	return ""
}

// String formats s in the Prometheus text style: name{a="x",b="y"}.
func (s Sample) String() string {
	var b strings.Builder
	b.WriteString(s.Name)
	if len(s.Labels) > 0 {
		b.WriteByte('{')
		for i, l := range s.Labels {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(l.Name + `="` + l.Value + `"`)
		}
		b.WriteByte('}')
	}
	return b.String()
}

// Source is anything with counters: a switch, a port, a NIC, a QP, a fault.
type Source interface {
	// Collect calls emit once per sample. It must not keep emit.
	Collect(emit func(Sample))
}

// NamedSource is a Source that can leave samples out by name before it
// builds them: a caller that keeps a few names of a large source (a
// 1,024-host lab's per-path samples) skips the work of the rest.
type NamedSource interface {
	Source
	// CollectNamed calls emit for every sample whose name want accepts.
	// It may call emit for others too: the caller still filters.
	CollectNamed(want func(name string) bool, emit func(Sample))
}

// CollectWanted collects src for a caller that keeps only the names want
// accepts (nil: all): by name when src is a NamedSource, else whole.
// emit may still see names want refuses.
func CollectWanted(src Source, want func(name string) bool, emit func(Sample)) {
	if ns, ok := src.(NamedSource); ok && want != nil {
		ns.CollectNamed(want, emit)
		return
	}
	src.Collect(emit)
}

// Gather collects every source and returns the samples sorted by name and
// labels, so that two identical runs give identical lists.
func Gather(srcs ...Source) []Sample {
	out := Collect(srcs...)
	Sort(out)
	return out
}

// Collect collects every source and returns the samples in the order the
// sources emitted them: the part of Gather that must see the sources'
// state (an emulation node runs it on its loop goroutine, and sorts
// after, off the loop).
func Collect(srcs ...Source) []Sample { return CollectIf(nil, srcs...) }

// CollectIf is Collect keeping only the samples whose name keep accepts
// (nil: all).
func CollectIf(keep func(name string) bool, srcs ...Source) []Sample {
	var out []Sample
	emit := func(s Sample) {
		if keep == nil || keep(s.Name) {
			out = append(out, s)
		}
	}
	for _, src := range srcs {
		CollectWanted(src, keep, emit)
	}
	return out
}

// Sort orders samples by name and labels (the order of their String()),
// keeping equal ones in place. Each sample's key is built once: a
// switch's 2,000 samples sort in well under a millisecond.
func Sort(samples []Sample) {
	keyed := make([]struct {
		key string
		s   Sample
	}, len(samples))
	for i, s := range samples {
		keyed[i].key, keyed[i].s = s.String(), s
	}
	sort.SliceStable(keyed, func(i, j int) bool { return keyed[i].key < keyed[j].key })
	for i := range keyed {
		samples[i] = keyed[i].s
	}
}

// Sum adds the values of every sample called name whose labels include all
// of match (a nil match sums them all).
func Sum(samples []Sample, name string, match ...Label) float64 {
	var total float64
outer:
	for _, s := range samples {
		if s.Name != name {
			continue
		}
		for _, m := range match {
			if s.Label(m.Name) != m.Value {
				continue outer
			}
		}
		total += s.Value
	}
	return total
}

// With returns a copy of labels with more appended, for a source that
// prefixes its children's labels (a switch adding node= to its ports').
func With(labels []Label, more ...Label) []Label {
	out := make([]Label, 0, len(labels)+len(more))
	out = append(out, labels...)
	return append(out, more...)
}
