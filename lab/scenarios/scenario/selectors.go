package scenario

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/topologies"
)

// lookup is one query a metric makes: a telemetry sample with labels.
type lookup struct {
	sample string
	match  []telemetry.Label
	scale  float64
}

// where is the node, port or NIC a metric's selectors point at.
type where struct {
	node *topologies.Node
	port *topologies.Port
	sel  selector // the selector that named it, for errors
	set  bool
}

// alt is one alternative set of labels a selector stands for.
type alt []telemetry.Label

// metric compiles metric m aggregated by agg under sels.
func (c *compiler) metric(m *Metric, agg string, sels []selector, text string) (numExpr, error) {
	seen := map[string]bool{}
	var w where
	var job *Workload
	var jobSel selector
	var classes []string
	var classSel selector
	var others []selector
	for _, s := range sels {
		if !contains(m.Labels, s.name) {
			return nil, errAt(s.nameOff, "label %s: %s takes %s%s", s.name, m.Name, strings.Join(m.Labels, ", "), didYouMean(s.name, m.Labels))
		}
		if seen[s.name] {
			return nil, errAt(s.nameOff, "label %s given twice", s.name)
		}
		seen[s.name] = true
		var err error
		switch s.name {
		case LabelNode:
			w.node, err = c.node(s)
			if w.port == nil {
				w.sel, w.set = s, true
			}
		case LabelPort, LabelNIC:
			w.port, w.sel, w.set, err = c.portSel(s, sels)
		case LabelClass:
			classes, err = c.classes(s)
			classSel = s
		case LabelJob:
			job, err = c.workload(s)
			jobSel = s
		default:
			err = c.checkValue(s)
			others = append(others, s)
		}
		if err != nil {
			return nil, err
		}
	}
	if w.port != nil && w.node != nil && w.port.Node != w.node {
		return nil, errAt(w.sel.valueOff, "label %s: %s is not on node %s", w.sel.name, PortName(w.port), w.node.Name)
	}
	var lookups []lookup
	why, whyOff := "", 0
	for _, smp := range m.Samples {
		alts := []alt{slices.Clone(smp.Match)}
		cross := func(opts []alt) {
			var next []alt
			for _, a := range alts {
				for _, o := range opts {
					next = append(next, append(slices.Clone(a), o...))
				}
			}
			alts = next
		}
		ok := true
		if w.set || job != nil {
			opts, reason := places(smp.Scope, w, job)
			if opts == nil {
				ok, why, whyOff = false, reason, w.sel.valueOff
				if !w.set {
					whyOff = jobSel.valueOff
				}
			}
			cross(opts)
		}
		if classes != nil {
			if smp.Class == "" {
				ok, why, whyOff = false, fmt.Sprintf("%s has no class label", smp.Name), classSel.nameOff
			}
			var opts []alt
			for _, tc := range classes {
				opts = append(opts, alt{{Name: smp.Class, Value: tc}})
			}
			cross(opts)
		}
		for _, s := range others {
			v := s.value
			if s.name == LabelSize {
				n, _ := collective.ParseSize(v)
				v = strconv.FormatInt(n, 10)
			}
			cross([]alt{{{Name: s.name, Value: v}}})
		}
		if !ok {
			continue
		}
		for _, a := range alts {
			lookups = append(lookups, lookup{sample: smp.Name, match: a, scale: smp.Scale})
		}
	}
	if len(lookups) == 0 {
		return nil, errAt(whyOff, "%s: nothing to measure (%s)", text, why)
	}
	u := m.Unit
	switch agg {
	case "rate":
		u = u.div(Time)
	case "count":
		u = Dimensionless
	}
	if m.Summary() {
		// One reading per statistic: pick agg's; without job=, the
		// series over every job (no job label).
		for i := range lookups {
			l := &lookups[i]
			l.match = append(slices.Clone(l.match), telemetry.Label{Name: "stat", Value: agg})
			if job == nil {
				l.match = append(l.match, telemetry.Label{Name: LabelJob, Value: ""})
			}
			if agg == "count" {
				l.scale = 1
			}
		}
		agg = "max"
	}
	return &metricExpr{m: m, agg: agg, text: text, lookups: lookups, u: u}, nil
}

// places returns the label alternatives that select w and job in a sample
// of scope, or nil and why the scope has none.
func places(scope Scope, w where, job *Workload) ([]alt, string) {
	switch scope {
	case OnSwitch:
		if job != nil {
			return nil, "switch counters have no job"
		}
		n := w.node
		if w.port != nil {
			n = w.port.Node
		}
		if n.Kind != topologies.KindSwitch {
			return nil, fmt.Sprintf("%s is a %s; this is counted by switches", n.Name, n.Kind)
		}
		a := alt{{Name: "node", Value: n.Name}}
		if w.port != nil {
			a = append(a, telemetry.Label{Name: "port", Value: strconv.Itoa(w.port.Index - 1)})
		}
		return []alt{a}, ""
	case OnNIC:
		var names []string
		switch {
		case w.port != nil:
			if w.port.Node.Kind == topologies.KindSwitch {
				return nil, fmt.Sprintf("%s is a switch port; this is counted by NICs", PortName(w.port))
			}
			names = []string{NICName(w.port.Node.Name, w.port.Name)}
		case w.node != nil:
			if w.node.Kind == topologies.KindSwitch {
				return nil, fmt.Sprintf("%s is a switch; this is counted by NICs", w.node.Name)
			}
			names = append(names, w.node.Name)
			for _, p := range w.node.Ports {
				names = append(names, NICName(w.node.Name, p.Name))
			}
		}
		if job != nil {
			var jn []string
			for _, p := range job.Ports() {
				n := NICName(p.Node.Name, p.Name)
				if names == nil || slices.Contains(names, n) || slices.Contains(names, p.Node.Name) {
					jn = append(jn, n)
				}
			}
			if len(jn) == 0 {
				return nil, fmt.Sprintf("workload %s does not use that NIC", job.Name)
			}
			names = jn
		}
		var out []alt
		for _, n := range names {
			out = append(out, alt{{Name: "node", Value: n}})
		}
		return out, ""
	case OnJob:
		if w.set {
			return nil, "it is reported per workload, not per node"
		}
		return []alt{{{Name: "job", Value: job.Name}}}, ""
	}
	return nil, "it has no node or job"
}

// portSel resolves port= (with node=, or as node:port) or nic=.
func (c *compiler) portSel(s selector, all []selector) (*topologies.Port, selector, bool, error) {
	if s.name == LabelNIC || strings.Contains(s.value, ":") {
		p, err := c.nic(s)
		if err == nil && s.name == LabelNIC && p.Node.Kind == topologies.KindSwitch {
			err = errAt(s.valueOff, "label nic: %s is a switch port; use node= and port=", PortName(p))
		}
		return p, s, true, err
	}
	for _, o := range all {
		if o.name == LabelNode {
			n, err := c.node(o)
			if err != nil {
				return nil, s, true, err
			}
			p, perr := port(n, s.value)
			if perr != nil {
				return nil, s, true, errAt(s.valueOff, "label port: %v", perr)
			}
			return p, s, true, nil
		}
	}
	return nil, s, true, errAt(s.nameOff, "label port: give node= too, or write port=node:port")
}

// classes resolves class=lossless|lossy|0..7 to traffic class labels.
func (c *compiler) classes(s selector) ([]string, error) {
	var lossless [8]bool
	for _, p := range c.env.Topology.Profiles {
		for i, l := range p.PFC.Lossless {
			lossless[i] = lossless[i] || l
		}
	}
	var out []string
	switch s.value {
	case "lossless", "lossy":
		for i, l := range lossless {
			if l == (s.value == "lossless") {
				out = append(out, strconv.Itoa(i))
			}
		}
		if len(out) == 0 {
			return nil, errAt(s.valueOff, "label class: topology %s has no %s classes", c.env.Topology.Name, s.value)
		}
		return out, nil
	}
	if tc, err := strconv.Atoi(s.value); err == nil && tc >= 0 && tc < 8 {
		return []string{s.value}, nil
	}
	return nil, errAt(s.valueOff, "label class: %q is not a class; known values lossless, lossy, 0..7", s.value)
}

// checkValue validates the value of a size, reason or kind selector.
func (c *compiler) checkValue(s selector) error {
	switch s.name {
	case LabelSize:
		if _, err := collective.ParseSize(s.value); err != nil {
			return errAt(s.valueOff, "label size: %v", err)
		}
	case LabelReason:
		if !contains(DropReasons, s.value) {
			return errAt(s.valueOff, "label reason: unknown drop reason %q%s", s.value, suggest(s.value, DropReasons))
		}
	case LabelKind:
		if !contains(faultKinds(), s.value) {
			return errAt(s.valueOff, "label kind: unknown fault kind %q%s", s.value, suggest(s.value, faultKinds()))
		}
	}
	return nil
}
