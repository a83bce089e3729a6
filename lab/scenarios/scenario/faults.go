package scenario

import (
	"errors"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/faults"
	"github.com/rocelab/rocelab/internal/yamldoc"
	"github.com/rocelab/rocelab/topologies"
)

// FaultStep is one entry of the fault schedule: a fault of Kind with
// Params (the faults package's spec syntax, after the kind word; Spec is
// the two parsed by faults.ParseSpec) added at At on Target and, when For
// is set, cleared For later.
type FaultStep struct {
	// Pos is where the step was written.
	Pos topologies.Pos
	At  clock.Time
	// For is how long the fault stays; 0 = until the run ends.
	For    clock.Duration
	Kind   string
	Params string
	Spec   faults.Spec
	// Target as written.
	Target string
	// Links are the link directions a link fault sits on (each the egress
	// of From toward To): one for "a->b" per parallel link, two per link
	// for "a<->b", one for a port "node:port" (its egress).
	Links []Direction
	// Port is the port a PFC storm is sent from.
	Port *topologies.Port
}

// Direction is one direction of a link: frames leaving From toward To.
type Direction = topologies.Direction

// Until returns when the fault is cleared, or clock.Never.
func (f *FaultStep) Until() clock.Time {
	if f.For == 0 {
		return clock.Never
	}
	return f.At.Add(f.For)
}

// FaultEvent is a step of the schedule in time order: Step added, or
// cleared when Clear is set.
type FaultEvent struct {
	At    clock.Time
	Step  *FaultStep
	Clear bool
}

// Schedule returns the fault schedule as add and clear events in time
// order (file order among equal times, clears before adds).
func (s *Scenario) Schedule() []FaultEvent {
	var ev []FaultEvent
	for _, f := range s.Faults {
		ev = append(ev, FaultEvent{At: f.At, Step: f})
		if f.For > 0 {
			ev = append(ev, FaultEvent{At: f.Until(), Step: f, Clear: true})
		}
	}
	slices.SortStableFunc(ev, func(a, b FaultEvent) int {
		if a.At != b.At {
			return int(min(max(a.At-b.At, -1), 1))
		}
		if a.Clear != b.Clear {
			if a.Clear {
				return -1
			}
			return 1
		}
		return 0
	})
	return ev
}

// faultKinds are the faults package's kinds. Every kind but storm sits on
// a link direction; a storm is sent from a port.
func faultKinds() []string {
	var out []string
	for _, k := range faults.Kinds {
		out = append(out, string(k))
	}
	return out
}

var portFaultKinds = []string{string(faults.KindStorm)}

var faultKeys = []string{"at", "for", "target", "kind", "params"}

func (r *resolver) faults(n *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		r.e.add(posOf(n), "faults: want a list, got %s", yamldoc.KindName(n))
		return
	}
	for _, c := range n.Content {
		if f := r.fault(yamldoc.Resolve(c)); f != nil {
			r.s.Faults = append(r.s.Faults, f)
		}
	}
}

func (r *resolver) fault(n *yaml.Node) *FaultStep {
	e := r.e
	f := &FaultStep{Pos: posOf(n)}
	vals := map[string]*yaml.Node{}
	if !e.fields(n, "fault", faultKeys, func(k string, _, v *yaml.Node) { vals[k] = v }) {
		return nil
	}
	for _, k := range []string{"at", "target", "kind"} {
		if vals[k] == nil {
			e.add(posOf(n), "fault: missing %s", k)
		}
	}
	ok := true
	if v := vals["at"]; v != nil {
		d, good := e.duration(v, "at")
		f.At, ok = clock.Time(d), ok && good
		if good && r.s.Duration > 0 && d >= r.s.Duration {
			e.add(posOf(v), "at: %s is not before the run ends (duration %s)", d, r.s.Duration)
		}
	}
	if v := vals["for"]; v != nil {
		d, good := e.duration(v, "for")
		if good && d <= 0 {
			e.add(posOf(v), "for: must be above 0 (leave it out to keep the fault to the end)")
		}
		f.For = d
	}
	if v := vals["params"]; v != nil {
		if v.Kind != yaml.ScalarNode || yamldoc.IsNull(v) {
			e.add(posOf(v), "params: want the fault's parameters as a string, e.g. \"1%%\", got %s", yamldoc.KindName(v))
		} else {
			f.Params = v.Value
		}
	}
	if v := vals["kind"]; v != nil {
		s, good := e.str(v, "fault kind")
		if good && !contains(faultKinds(), s) {
			e.add(posOf(v), "unknown fault kind %q%s", s, suggest(s, faultKinds()))
			good = false
		}
		f.Kind, ok = s, ok && good
		if good {
			spec, err := faults.ParseSpec(strings.TrimSpace(f.Kind + " " + f.Params))
			if err != nil {
				at := v
				if p := vals["params"]; p != nil {
					at = p
				}
				e.add(posOf(at), "params: %v", err)
			}
			f.Spec = spec
		}
	}
	if v := vals["target"]; v != nil && f.Kind != "" && ok {
		if s, good := e.str(v, "target"); good {
			f.Target = s
			r.target(f, v)
		}
	}
	return f
}

// target resolves f.Target for f.Kind, in the grammar every fault target
// is written in (topologies.ResolveTarget).
func (r *resolver) target(f *FaultStep, v *yaml.Node) {
	tg, err := r.t.ResolveTarget(f.Target)
	if err != nil {
		off := 0
		var te *topologies.TargetError
		if errors.As(err, &te) {
			off = te.Offset
		}
		r.e.add(r.e.at(v, off), "target: %v", err)
		return
	}
	if contains(portFaultKinds, f.Kind) {
		if tg.Link || tg.Node != nil {
			r.e.add(posOf(v), "target: a %s is sent from a port: want node:port, got %q", f.Kind, f.Target)
			return
		}
		f.Port = tg.Directions[0].From
		return
	}
	f.Links = tg.Directions
}

// FaultSchedule is the scenario's fault steps as one faults.Schedule, an
// event per egress port a step sits on ("node:port"): the simulated run
// applies it on its engine, the emulated run on the lab's fabric clock.
func (sc *Scenario) FaultSchedule() faults.Schedule {
	var s faults.Schedule
	for _, f := range sc.Faults {
		var ports []*topologies.Port
		if f.Port != nil {
			ports = append(ports, f.Port)
		}
		for _, d := range f.Links {
			ports = append(ports, d.From)
		}
		for _, p := range ports {
			s.Events = append(s.Events, faults.Event{At: clock.Duration(f.At), For: f.For, Target: PortName(p), Spec: f.Spec})
		}
	}
	return s
}
