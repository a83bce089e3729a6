package topologies

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/internal/yamldoc"
	"go.yaml.in/yaml/v3"
)

// decoder fills spec values from a yaml.Node tree by reflection: fields are
// matched by their yaml tag, unknown and duplicate keys are errors, and
// positions go into each struct's Where. Every error is collected, none stops it.
type decoder struct {
	e *errs
}

var (
	whereType   = reflect.TypeFor[Where]()
	scalarIface = reflect.TypeFor[scalarParser]()
)

// decode fills v (settable) from n. what names the value in errors.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, what string) {
	n = yamldoc.Resolve(n)
	p := posOf(n)
	if v.Kind() == reflect.Pointer {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			d.e.add(p, "%s: missing value", what)
			return
		}
		nv := reflect.New(v.Type().Elem())
		before := len(d.e.list)
		d.decode(n, nv.Elem(), what)
		// A value that did not decode stays unset, so that checks of its
		// meaning do not pile more errors onto the same mistake.
		if len(d.e.list) == before || nv.Elem().Kind() == reflect.Struct {
			v.Set(nv)
		}
		return
	}
	if v.CanAddr() && v.Addr().Type().Implements(scalarIface) {
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
			d.e.add(p, "%s: want a value, got %s", what, yamldoc.KindName(n))
			return
		}
		if err := v.Addr().Interface().(scalarParser).parseScalar(n.Value); err != nil {
			d.e.add(p, "%s: %v", what, err)
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.decodeStruct(n, v, what)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.e.add(p, "%s: want a list, got %s", what, yamldoc.KindName(n))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			d.decode(c, s.Index(i), strings.TrimSuffix(what, "s"))
		}
		v.Set(s)
	case reflect.Map:
		d.decodeMap(n, v, what)
	case reflect.String:
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
			d.e.add(p, "%s: want a string, got %s", what, yamldoc.KindName(n))
			return
		}
		v.SetString(n.Value)
	case reflect.Int:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			d.e.add(p, "%s: want an integer, got %s", what, yamldoc.KindName(n))
			return
		}
		i, err := strconv.ParseInt(n.Value, 0, 64)
		if err != nil {
			d.e.add(p, "%s: bad integer %q", what, n.Value)
			return
		}
		v.SetInt(i)
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			d.e.add(p, "%s: want true or false, got %s", what, yamldoc.KindName(n))
			return
		}
		b, _ := strconv.ParseBool(n.Value)
		v.SetBool(b)
	default:
		panic("topologies: decoder cannot fill " + v.Type().String())
	}
}

// fieldByKey maps yaml keys of struct type t to field indexes.
func fieldByKey(t reflect.Type) (map[string]int, []string) {
	m := map[string]int{}
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		m[name] = i
		keys = append(keys, name)
	}
	return m, keys
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, what string) {
	p := posOf(n)
	t := v.Type()
	var w *Where
	if f, ok := t.FieldByName("Where"); ok && f.Type == whereType {
		w = v.FieldByIndex(f.Index).Addr().Interface().(*Where)
		if w.At.IsZero() {
			w.At = p
		}
		w.Keys = map[string]Pos{}
	}
	if n.Kind == yaml.ScalarNode {
		if off := v.FieldByName("Off"); off.IsValid() && n.Value == "off" {
			off.SetBool(true)
			return
		}
		if f := v.FieldByName("Link"); f.IsValid() && n.Tag == "!!str" {
			f.SetString(n.Value)
			w.Keys["link"] = contentPos(n)
			return
		}
	}
	if n.Kind != yaml.MappingNode {
		alt := ""
		if v.FieldByName("Off").IsValid() {
			alt = " or off"
		}
		d.e.add(p, "%s: want a mapping%s, got %s", what, alt, yamldoc.KindName(n))
		return
	}
	fields, keys := fieldByKey(t)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], yamldoc.Resolve(n.Content[i+1])
		key := kn.Value
		if kn.Kind != yaml.ScalarNode {
			d.e.add(posOf(kn), "%s: keys must be plain names", what)
			continue
		}
		if key == "<<" {
			d.e.add(posOf(kn), "%s: merge keys (<<) are not supported", what)
			continue
		}
		fi, ok := fields[key]
		if !ok {
			d.e.add(posOf(kn), "unknown key %q in %s%s", key, what, suggest(key, keys))
			continue
		}
		if seen[key] {
			d.e.add(posOf(kn), "duplicate key %q in %s", key, what)
			continue
		}
		seen[key] = true
		if w != nil {
			w.Keys[key] = contentPos(vn)
			switch vn.Kind {
			case yaml.SequenceNode:
				for j, c := range vn.Content {
					w.Keys[key+"."+strconv.Itoa(j)] = posOf(c)
				}
			case yaml.MappingNode:
				for j := 0; j < len(vn.Content); j += 2 {
					w.Keys[key+"."+vn.Content[j].Value] = posOf(vn.Content[j])
				}
			}
		}
		d.decode(vn, v.Field(fi), key)
	}
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, what string) {
	p := posOf(n)
	if n.Kind != yaml.MappingNode {
		d.e.add(p, "%s: want a mapping, got %s", what, yamldoc.KindName(n))
		return
	}
	t := v.Type()
	m := reflect.MakeMap(t)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if kn.Kind != yaml.ScalarNode {
			d.e.add(posOf(kn), "%s: keys must be plain names", what)
			continue
		}
		if seen[kn.Value] {
			d.e.add(posOf(kn), "duplicate %s %q", strings.TrimSuffix(what, "s"), kn.Value)
			continue
		}
		seen[kn.Value] = true
		key := reflect.New(t.Key()).Elem()
		switch t.Key().Kind() {
		case reflect.String:
			key.SetString(kn.Value)
		case reflect.Int:
			i, err := strconv.Atoi(kn.Value)
			if err != nil {
				d.e.add(posOf(kn), "%s: key %q is not a number", what, kn.Value)
				continue
			}
			key.SetInt(int64(i))
		}
		val := reflect.New(t.Elem()).Elem()
		// Named entries (nodes, profiles) are positioned at their key.
		if t.Elem().Kind() == reflect.Pointer && t.Elem().Elem().Kind() == reflect.Struct {
			ev := reflect.New(t.Elem().Elem())
			if f := ev.Elem().FieldByName("Name"); f.IsValid() {
				f.SetString(kn.Value)
			}
			if f := ev.Elem().FieldByName("Where"); f.IsValid() {
				f.Addr().Interface().(*Where).At = posOf(kn)
			}
			rn := yamldoc.Resolve(vn)
			if rn.Kind == yaml.ScalarNode && rn.Tag == "!!null" {
				d.e.add(posOf(vn), "%s %q: missing value", what, kn.Value)
				continue
			}
			d.decode(rn, ev.Elem(), fmt.Sprintf("%s %q", strings.TrimSuffix(what, "s"), kn.Value))
			val.Set(ev)
		} else {
			d.decode(vn, val, fmt.Sprintf("%s %s", what, kn.Value))
		}
		m.SetMapIndex(key, val)
	}
	v.Set(m)
}

// suggest returns ` (did you mean "x"?)` for the closest known key, or
// the list of known keys.
func suggest(key string, keys []string) string {
	if best := Closest(key, keys); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return fmt.Sprintf(" (known: %s)", strings.Join(keys, ", "))
}

// Closest returns the element of known nearest to s by edit distance when
// it is near enough to be a typo (at most 2 edits; 1 for words of up to 3
// letters), else "". Scenario files use it for their "did you mean".
func Closest(s string, known []string) string {
	best, bestD := "", 3
	if len(s) <= 3 {
		bestD = 2
	}
	for _, k := range known {
		if d := editDistance(s, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func reflectValue(ptr any) reflect.Value { return reflect.ValueOf(ptr).Elem() }

// contentPos is where a scalar's text starts (after an opening quote).
func contentPos(n *yaml.Node) Pos {
	p := posOf(n)
	if n.Kind == yaml.ScalarNode && (n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle)) != 0 {
		p.Col++
	}
	return p
}
