package scenario

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/internal/yamldoc"
	"github.com/rocelab/rocelab/topologies"
)

// Scenario is a resolved, validated scenario file.
type Scenario struct {
	// Name of the scenario (the name key, or the file's base name).
	Name        string
	Description string
	// Source is the file it was read from.
	Source string
	// TopologyRef is the topology as written: a built-in name, a file path
	// (as written, relative to the scenario), or "inline".
	TopologyRef string
	// Topology is the resolved topology.
	Topology *topologies.Topology
	// Scale is the emulation's scale k.
	Scale Scale
	// Duration is how long the run lasts, in fabric time.
	Duration clock.Duration
	// Seed seeds every random source of the run (default 1).
	Seed uint64
	// Workloads in file order.
	Workloads []*Workload
	// Faults is the fault schedule, in file order (FaultSteps sorts by time).
	Faults []*FaultStep
	// Expect holds the parsed expectations, in file order.
	Expect []*Expectation
}

// Scale is the scale k of an emulated run: a factor, or auto (the
// lab picks one the machine can forward).
type Scale struct {
	Auto   bool
	Factor int
}

// String formats s as written: auto or the factor.
func (s Scale) String() string {
	if s.Auto {
		return "auto"
	}
	return strconv.Itoa(s.Factor)
}

// Workload returns the workload called name, or nil.
func (s *Scenario) Workload(name string) *Workload {
	for _, w := range s.Workloads {
		if w.Name == name {
			return w
		}
	}
	return nil
}

var topKeys = []string{"name", "description", "topology", "scale", "duration", "seed", "workloads", "faults", "expect"}

var nameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)

// validName reports whether n, the value of node v, is a scenario or
// workload name, and says why not as what when it is not.
func (e *errs) validName(v *yaml.Node, what, n string) bool {
	if nameRE.MatchString(n) {
		return true
	}
	e.add(posOf(v), "%s %q: want letters, digits, '_', '-' and '.', starting with a letter", what, n)
	return false
}

// Load reads and resolves the scenario file at path. A topology given as
// a relative path is read relative to the scenario's directory. A file that
// does not validate gives a topologies.ErrorList.
func Load(path string) (*Scenario, error) {
	return yamldoc.Load(path, "scenario", Parse)
}

// Parse resolves the scenario text data; name is the file name used in
// error messages, as the default scenario name, and to find topology files
// given by a relative path.
func Parse(name string, data []byte) (*Scenario, error) {
	e := &errs{file: name, lines: strings.Split(string(data), "\n")}
	for i, l := range e.lines {
		e.lines[i] = strings.TrimSuffix(l, "\r")
	}
	top := parseYAML(e, data)
	if top == nil {
		return nil, e.err()
	}
	s := &Scenario{Source: name, Seed: 1, Scale: Scale{Auto: true}}
	vals := map[string]*yaml.Node{}
	keys := map[string]*yaml.Node{}
	if !e.fields(top, "scenario", topKeys, func(k string, kn, v *yaml.Node) { vals[k], keys[k] = v, kn }) {
		return nil, e.err()
	}
	s.Name = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(name), ".yaml"), ".yml")
	if v := vals["name"]; v != nil {
		if n, ok := e.str(v, "name"); ok && e.validName(v, "name", n) {
			s.Name = n
		}
	}
	if v := vals["description"]; v != nil {
		s.Description, _ = e.str(v, "description")
	}
	if v := vals["scale"]; v != nil {
		s.Scale, _ = scalar(e, v, "scale", parseScale)
	}
	if v := vals["duration"]; v != nil {
		if d, ok := e.duration(v, "duration"); ok {
			if d <= 0 {
				e.add(posOf(v), "duration: must be above 0")
			}
			s.Duration = d
		}
	} else {
		e.add(posOf(top), "scenario: missing duration (the fabric time the run lasts, e.g. 20ms)")
	}
	if v := vals["seed"]; v != nil {
		if v.Kind != yaml.ScalarNode || v.Tag != "!!int" {
			e.add(posOf(v), "seed: want an integer, got %s", yamldoc.KindName(v))
		} else if u, err := strconv.ParseUint(v.Value, 0, 64); err != nil {
			e.add(posOf(v), "seed: want an integer from 0 to 2^64-1, got %q", v.Value)
		} else {
			s.Seed = u
		}
	}
	s.TopologyRef, s.Topology = resolveTopology(e, name, vals["topology"], keys["topology"], top)
	if s.Topology == nil {
		return nil, e.err()
	}
	r := &resolver{e: e, s: s, t: s.Topology}
	if v := vals["workloads"]; v != nil {
		r.workloads(v)
	}
	if v := vals["faults"]; v != nil {
		r.faults(v)
	}
	if v := vals["expect"]; v != nil {
		r.expectations(v)
	}
	if err := e.err(); err != nil {
		return nil, err
	}
	return s, nil
}

// resolver resolves the parts of a scenario that refer to its topology.
type resolver struct {
	e *errs
	s *Scenario
	t *topologies.Topology
}

func parseScale(v string) (Scale, error) {
	if v == "auto" {
		return Scale{Auto: true}, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return Scale{}, fmt.Errorf("want auto or a whole factor >= 1, got %q", v)
	}
	return Scale{Factor: n}, nil
}

// parseYAML returns the top node of data, or nil after reporting why not.
func parseYAML(e *errs, data []byte) *yaml.Node {
	top, yerr := yamldoc.Parse(data, "scenario")
	if yerr != nil {
		e.add(topologies.Pos{Line: yerr.Line, Col: yerr.Col}, "%s", yerr.Msg)
		return nil
	}
	return top
}
