package scenario

import (
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/internal/yamldoc"
	"github.com/rocelab/rocelab/topologies"
)

// Small helpers that read yaml.Nodes strictly, reporting into errs.

// fields walks mapping n, whose keys must be among known: unknown and
// duplicate keys are errors; f gets every other key with its value. It
// returns false when n is not a mapping.
func (e *errs) fields(n *yaml.Node, what string, known []string, f func(key string, k, v *yaml.Node)) bool {
	n = yamldoc.Resolve(n)
	if n.Kind != yaml.MappingNode {
		e.add(posOf(n), "%s: want a mapping, got %s", what, yamldoc.KindName(n))
		return false
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], yamldoc.Resolve(n.Content[i+1])
		switch {
		case k.Kind != yaml.ScalarNode:
			e.add(posOf(k), "%s: keys must be plain names", what)
		case k.Value == "<<":
			e.add(posOf(k), "%s: merge keys (<<) are not supported", what)
		case !contains(known, k.Value):
			e.add(posOf(k), "unknown key %q in %s%s", k.Value, what, suggest(k.Value, known))
		case seen[k.Value]:
			e.add(posOf(k), "duplicate key %q in %s", k.Value, what)
		default:
			seen[k.Value] = true
			f(k.Value, k, v)
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// str reads a non-empty string scalar.
func (e *errs) str(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || yamldoc.IsNull(n) {
		e.add(posOf(n), "%s: want a string, got %s", what, yamldoc.KindName(n))
		return "", false
	}
	if n.Value == "" {
		e.add(posOf(n), "%s: empty", what)
		return "", false
	}
	return n.Value, true
}

// integer reads an integer scalar of at least lo.
func (e *errs) integer(n *yaml.Node, what string, lo int) (int, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		e.add(posOf(n), "%s: want an integer, got %s", what, yamldoc.KindName(n))
		return 0, false
	}
	i, err := strconv.ParseInt(n.Value, 0, 64)
	if err != nil || i > 1<<31 {
		e.add(posOf(n), "%s: bad integer %q", what, n.Value)
		return 0, false
	}
	if int(i) < lo {
		e.add(posOf(n), "%s: %d is below the minimum %d", what, i, lo)
		return 0, false
	}
	return int(i), true
}

func (e *errs) boolean(n *yaml.Node, what string) (bool, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		e.add(posOf(n), "%s: want true or false, got %s", what, yamldoc.KindName(n))
		return false, false
	}
	b, _ := strconv.ParseBool(n.Value)
	return b, true
}

// scalar reads a scalar and parses it with parse, an error naming what.
func scalar[T any](e *errs, n *yaml.Node, what string, parse func(string) (T, error)) (T, bool) {
	var zero T
	if n.Kind != yaml.ScalarNode || yamldoc.IsNull(n) {
		e.add(posOf(n), "%s: want a value, got %s", what, yamldoc.KindName(n))
		return zero, false
	}
	v, err := parse(n.Value)
	if err != nil {
		e.add(posOf(n), "%s: %v", what, err)
		return zero, false
	}
	return v, true
}

func (e *errs) duration(n *yaml.Node, what string) (clock.Duration, bool) {
	return scalar(e, n, what, topologies.ParseDuration)
}

func (e *errs) size(n *yaml.Node, what string) (int64, bool) {
	return scalar(e, n, what, topologies.ParseSize)
}

func (e *errs) rate(n *yaml.Node, what string) (clock.Rate, bool) {
	return scalar(e, n, what, topologies.ParseRate)
}

// oneOf reads a string that must be one of choices.
func (e *errs) oneOf(n *yaml.Node, what string, choices ...string) (string, bool) {
	s, ok := e.str(n, what)
	if !ok {
		return "", false
	}
	if !contains(choices, s) {
		e.add(posOf(n), "unknown %s %q%s", what, s, suggest(s, choices))
		return "", false
	}
	return s, true
}
