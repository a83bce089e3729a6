package topologies

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/rocelab/rocelab/core/clock"
)

// The value types hold a parsed quantity of a spec. The decoder hands them
// the scalar as written (parseScalar); a bad value is an error at its position.

// Size is a byte count as written: 32MB, 4KiB, 1500.
type Size int64

// Rate is a line rate as written: 400G, 100Gbps.
type Rate clock.Rate

// Duration is a fabric duration as written: 1us, 500ns.
type Duration clock.Duration

// Fraction is a number written as 0.125, 1/8 or 12.5%.
type Fraction float64

// Ratio is an oversubscription ratio written as 2, 1.5 or "2:1".
type Ratio float64

// SizeOrAuto is a byte count or auto (Auto set).
type SizeOrAuto struct {
	Bytes int64
	Auto  bool
}

// RateOrOff is a rate or off (Off set).
type RateOrOff struct {
	Rate clock.Rate
	Off  bool
}

type scalarParser interface {
	parseScalar(s string) error
}

var (
	_ scalarParser = (*Size)(nil)
	_ scalarParser = (*Rate)(nil)
	_ scalarParser = (*Duration)(nil)
	_ scalarParser = (*Fraction)(nil)
	_ scalarParser = (*Ratio)(nil)
	_ scalarParser = (*SizeOrAuto)(nil)
	_ scalarParser = (*RateOrOff)(nil)
)

func (v *Size) parseScalar(s string) error     { return parseAs(v, s, ParseSize) }
func (v *Rate) parseScalar(s string) error     { return parseAs(v, s, ParseRate) }
func (v *Duration) parseScalar(s string) error { return parseAs(v, s, ParseDuration) }
func (v *Fraction) parseScalar(s string) error { return parseAs(v, s, ParseFraction) }
func (v *Ratio) parseScalar(s string) error    { return parseAs(v, s, ParseRatio) }

// parseAs stores what parse makes of s in *v, converted to v's type (the
// zero value when s does not parse).
func parseAs[V, U ~int64 | ~float64](v *V, s string, parse func(string) (U, error)) error {
	u, err := parse(s)
	*v = V(u)
	return err
}

// ParseRatio parses an oversubscription ratio: 2, 1.5 or 2:1.
func ParseRatio(s string) (float64, error) {
	bad := fmt.Errorf("bad ratio %q: want a number like 2 or a ratio like 2:1", s)
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return 0, bad
		}
		return f, nil
	}
	x, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	y, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if err1 != nil || err2 != nil || y == 0 {
		return 0, bad
	}
	return x / y, nil
}

func (v *SizeOrAuto) parseScalar(s string) error {
	n, auto, err := parseOrWord(s, "auto", ParseSize)
	if err == nil {
		*v = SizeOrAuto{Bytes: n, Auto: auto}
	}
	return err
}

func (v *RateOrOff) parseScalar(s string) error {
	r, off, err := parseOrWord(s, "off", ParseRate)
	if err == nil {
		*v = RateOrOff{Rate: r, Off: off}
	}
	return err
}

// parseOrWord parses s with parse, or reports that s is word: a quantity
// or a keyword (auto, off). Its error names the keyword as the other
// choice.
func parseOrWord[T any](s, word string, parse func(string) (T, error)) (v T, isWord bool, err error) {
	if s == word {
		return v, true, nil
	}
	if v, err = parse(s); err != nil {
		return v, false, fmt.Errorf("%w, or %s", err, word)
	}
	return v, false, nil
}

const (
	sizePattern     = `^` + numberPattern + ` *(B|[KkMmGgTt](iB|B)?)?$`
	ratePattern     = `^(0|` + numberPattern + ` *([KkMmGgTt]?(bps|b/s|bit/s)|[KkMmGgTt]))$`
	durationPattern = `^(0|` + numberPattern + ` *(ps|ns|us|µs|μs|ms|s))$`
	// numberPattern is core/units' number: 2, 2.74, .5, 1e3.
	numberPattern = `([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?`
)

// JSONSchema describes Size for editors.
func (Size) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Description: "A byte count: a plain number of bytes, or a number with a unit (B, KB, MB, GB, TB decimal; KiB, MiB, GiB, TiB binary), e.g. 32MB, 4KiB, \"2.74 MB\"; K, M, G, T alone are decimal too.",
		OneOf: []*jsonschema.Schema{
			{Type: "integer", Minimum: "0"},
			{Type: "string", Pattern: sizePattern},
		},
	}
}

// JSONSchema describes Rate for editors.
func (Rate) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:        "string",
		Pattern:     ratePattern,
		Description: "A line rate in bits per second with a unit, e.g. 400G, 400Gbps, 400Gb/s, \"400 Gb/s\", 1T, 100Mbps.",
	}
}

// JSONSchema describes Duration for editors.
func (Duration) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		OneOf: []*jsonschema.Schema{
			{Type: "string", Pattern: durationPattern},
			{Type: "integer", Const: 0},
		},
		Description: "A duration with a unit (ps, ns, us, ms, s), e.g. 1us, 500ns.",
	}
}

// JSONSchema describes Fraction for editors.
func (Fraction) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		OneOf: []*jsonschema.Schema{
			{Type: "number"},
			{Type: "string", Pattern: `^[0-9.]+ ?(/ ?[0-9.]+|%)$`},
		},
		Description: "A number: 0.125, a ratio 1/8, or a percentage 12.5%.",
	}
}

// JSONSchema describes Ratio for editors.
func (Ratio) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		OneOf: []*jsonschema.Schema{
			{Type: "number", Minimum: "1"},
			{Type: "string", Pattern: `^[0-9.]+ ?: ?[0-9.]+$`},
		},
		Description: "An oversubscription ratio: 2, 1.5 or \"2:1\".",
	}
}

// JSONSchema describes SizeOrAuto for editors.
func (SizeOrAuto) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		OneOf: []*jsonschema.Schema{
			{Type: "integer", Minimum: "0"},
			{Type: "string", Pattern: sizePattern},
			{Type: "string", Enum: []any{"auto"}},
		},
		Description: "A byte count, or auto.",
	}
}

// JSONSchema describes RateOrOff for editors.
func (RateOrOff) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		OneOf: []*jsonschema.Schema{
			{Type: "string", Pattern: ratePattern},
			{Type: "string", Enum: []any{"off"}},
		},
		Description: "A line rate, or off.",
	}
}
