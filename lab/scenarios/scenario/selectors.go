package scenario

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/lab/scenarios/scenario/expect"
	"github.com/rocelab/rocelab/topologies"
)

// where is the node, port or NIC a metric's selectors point at.
type where struct {
	node *topologies.Node
	port *topologies.Port
	sel  expect.Selector // the selector that named it, for errors
	set  bool
}

// alt is one alternative set of labels a selector stands for.
type alt []telemetry.Label

// Lookups implements Binder.
func (b binding) Lookups(m *expect.Metric, sels []expect.Selector, text string) ([]expect.Lookup, error) {
	seen := map[string]bool{}
	var w where
	var job *Workload
	var jobSel expect.Selector
	var classes []string
	var classSel expect.Selector
	var others []expect.Selector
	for _, s := range sels {
		if !contains(m.Labels, s.Name) {
			return nil, expect.Errorf(s.NameOff, "label %s: %s takes %s%s", s.Name, m.Name, strings.Join(m.Labels, ", "), expect.DidYouMean(s.Name, m.Labels))
		}
		if seen[s.Name] {
			return nil, expect.Errorf(s.NameOff, "label %s given twice", s.Name)
		}
		seen[s.Name] = true
		var err error
		switch s.Name {
		case expect.LabelNode:
			w.node, err = b.node(s)
			if w.port == nil {
				w.sel, w.set = s, true
			}
		case expect.LabelPort, expect.LabelNIC:
			w.port, w.sel, w.set, err = b.portSel(s, sels)
		case expect.LabelClass:
			classes, err = b.classes(s)
			classSel = s
		case expect.LabelJob:
			job, err = b.workload(s)
			jobSel = s
		default:
			err = b.checkValue(s)
			others = append(others, s)
		}
		if err != nil {
			return nil, err
		}
	}
	if w.port != nil && w.node != nil && w.port.Node != w.node {
		return nil, expect.Errorf(w.sel.ValueOff, "label %s: %s is not on node %s", w.sel.Name, PortName(w.port), w.node.Name)
	}
	var lookups []expect.Lookup
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
				ok, why, whyOff = false, reason, w.sel.ValueOff
				if !w.set {
					whyOff = jobSel.ValueOff
				}
			}
			cross(opts)
		}
		if classes != nil {
			if smp.Class == "" {
				ok, why, whyOff = false, fmt.Sprintf("%s has no class label", smp.Name), classSel.NameOff
			}
			var opts []alt
			for _, tc := range classes {
				opts = append(opts, alt{{Name: smp.Class, Value: tc}})
			}
			cross(opts)
		}
		for _, s := range others {
			v := s.Value
			if s.Name == expect.LabelSize {
				n, _ := collective.ParseSize(v)
				v = strconv.FormatInt(n, 10)
			}
			cross([]alt{{{Name: s.Name, Value: v}}})
		}
		if !ok {
			continue
		}
		for _, a := range alts {
			lookups = append(lookups, expect.Lookup{Sample: smp.Name, Match: a, Scale: smp.Scale})
		}
	}
	if len(lookups) == 0 {
		return nil, expect.Errorf(whyOff, "%s: nothing to measure (%s)", text, why)
	}
	return lookups, nil
}

// places returns the label alternatives that select w and job in a sample
// of scope, or nil and why the scope has none.
func places(scope expect.Scope, w where, job *Workload) ([]alt, string) {
	switch scope {
	case expect.OnSwitch:
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
	case expect.OnNIC:
		var names []string
		switch {
		case w.port != nil:
			if w.port.Node.Kind == topologies.KindSwitch {
				return nil, fmt.Sprintf("%s is a switch port; this is counted by NICs", PortName(w.port))
			}
			names = []string{expect.NICName(w.port.Node.Name, w.port.Name)}
		case w.node != nil:
			if w.node.Kind == topologies.KindSwitch {
				return nil, fmt.Sprintf("%s is a switch; this is counted by NICs", w.node.Name)
			}
			names = append(names, w.node.Name)
			for _, p := range w.node.Ports {
				names = append(names, expect.NICName(w.node.Name, p.Name))
			}
		}
		if job != nil {
			var jn []string
			for _, p := range job.Ports() {
				n := expect.NICName(p.Node.Name, p.Name)
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
	case expect.OnJob:
		if w.set {
			return nil, "it is reported per workload, not per node"
		}
		return []alt{{{Name: "job", Value: job.Name}}}, ""
	}
	return nil, "it has no node or job"
}

// portSel resolves port= (with node=, or as node:port) or nic=.
func (b binding) portSel(s expect.Selector, all []expect.Selector) (*topologies.Port, expect.Selector, bool, error) {
	if s.Name == expect.LabelNIC || strings.Contains(s.Value, ":") {
		p, err := b.nic(s)
		if err == nil && s.Name == expect.LabelNIC && p.Node.Kind == topologies.KindSwitch {
			err = expect.Errorf(s.ValueOff, "label nic: %s is a switch port; use node= and port=", PortName(p))
		}
		return p, s, true, err
	}
	for _, o := range all {
		if o.Name == expect.LabelNode {
			n, err := b.node(o)
			if err != nil {
				return nil, s, true, err
			}
			p, perr := port(n, s.Value)
			if perr != nil {
				return nil, s, true, expect.Errorf(s.ValueOff, "label port: %v", perr)
			}
			return p, s, true, nil
		}
	}
	return nil, s, true, expect.Errorf(s.NameOff, "label port: give node= too, or write port=node:port")
}

// classes resolves class=lossless|lossy|0..7 to traffic class labels.
func (b binding) classes(s expect.Selector) ([]string, error) {
	var lossless [8]bool
	for _, p := range b.env.Topology.Profiles {
		for i, l := range p.PFC.Lossless {
			lossless[i] = lossless[i] || l
		}
	}
	var out []string
	switch s.Value {
	case "lossless", "lossy":
		for i, l := range lossless {
			if l == (s.Value == "lossless") {
				out = append(out, strconv.Itoa(i))
			}
		}
		if len(out) == 0 {
			return nil, expect.Errorf(s.ValueOff, "label class: topology %s has no %s classes", b.env.Topology.Name, s.Value)
		}
		return out, nil
	}
	if tc, err := strconv.Atoi(s.Value); err == nil && tc >= 0 && tc < 8 {
		return []string{s.Value}, nil
	}
	return nil, expect.Errorf(s.ValueOff, "label class: %q is not a class; known values lossless, lossy, 0..7", s.Value)
}

// checkValue validates the value of a size, reason or kind selector.
func (b binding) checkValue(s expect.Selector) error {
	switch s.Name {
	case expect.LabelSize:
		if _, err := collective.ParseSize(s.Value); err != nil {
			return expect.Errorf(s.ValueOff, "label size: %v", err)
		}
	case expect.LabelReason:
		if !contains(expect.DropReasons, s.Value) {
			return expect.Errorf(s.ValueOff, "label reason: unknown drop reason %q%s", s.Value, suggest(s.Value, expect.DropReasons))
		}
	case expect.LabelKind:
		if !contains(faultKinds(), s.Value) {
			return expect.Errorf(s.ValueOff, "label kind: unknown fault kind %q%s", s.Value, suggest(s.Value, faultKinds()))
		}
	}
	return nil
}
