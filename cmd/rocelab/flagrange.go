package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every numeric flag declares the values it accepts (limit), and flags
// that take one of a few words declare them (oneOf); the root command
// checks them all before any command runs, so a value out of range is bad
// input — exit 2 with a sentence naming the flag — before a lab is looked
// for or a node refuses it. TestFlagRanges walks the command tree: a
// numeric flag without a range fails it.
const (
	rangeAnnotation = "rocelab/range"
	enumAnnotation  = "rocelab/enum"
	// notLabAnnotation marks a --name flag that names something else than
	// a lab (a generated topology): every other --name is a lab's name,
	// checked as such (state.ValidName) when given.
	notLabAnnotation = "rocelab/not-a-lab-name"
)

// maxScale is the largest scale k a flag takes: beyond it a
// lab's clock barely moves (a microsecond of fabric time is a second of
// wall clock).
const maxScale = 1_000_000

// unbounded is an open end of a range.
var unbounded = math.Inf(1)

// limit declares that numeric flag name of fs takes min..max (inclusive;
// ±unbounded for no bound). Durations are in seconds.
func limit(fs *pflag.FlagSet, name string, min, max float64) {
	if fs.Lookup(name) == nil {
		panic("limit: no flag --" + name)
	}
	fs.SetAnnotation(name, rangeAnnotation, []string{strconv.FormatFloat(min, 'g', -1, 64), strconv.FormatFloat(max, 'g', -1, 64)})
}

// oneOf declares the words flag name of fs takes.
func oneOf(fs *pflag.FlagSet, name string, words ...string) {
	if fs.Lookup(name) == nil {
		panic("oneOf: no flag --" + name)
	}
	fs.SetAnnotation(name, enumAnnotation, words)
}

// numericFlag reports whether a flag's type is a number or a duration.
func numericFlag(f *pflag.Flag) bool {
	switch f.Value.Type() {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64", "duration":
		return true
	}
	return false
}

// flagRange returns a flag's declared range, if it has one.
func flagRange(f *pflag.Flag) (min, max float64, ok bool) {
	r := f.Annotations[rangeAnnotation]
	if len(r) != 2 {
		return 0, 0, false
	}
	min, _ = strconv.ParseFloat(r[0], 64)
	max, _ = strconv.ParseFloat(r[1], 64)
	return min, max, true
}

// checkFlags checks every flag the user set on cmd against its declared
// range or words.
func checkFlags(cmd *cobra.Command) error {
	var bad error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if bad != nil {
			return
		}
		if f.Name == "name" && f.Annotations[notLabAnnotation] == nil {
			if err := state.ValidName(f.Value.String()); err != nil {
				bad = fmt.Errorf("--name %q: %v", f.Value.String(), err)
				return
			}
		}
		if words := f.Annotations[enumAnnotation]; len(words) > 0 && !slices.Contains(words, f.Value.String()) {
			bad = fmt.Errorf("--%s %q: want %s", f.Name, f.Value.String(), orList(words))
			return
		}
		min, max, ok := flagRange(f)
		if !ok {
			return
		}
		v, shown, err := flagNumber(f)
		if err != nil {
			bad = fmt.Errorf("--%s %s: %v", f.Name, shown, err)
		} else if v < min || v > max || math.IsNaN(v) {
			bad = fmt.Errorf("--%s %s: want %s", f.Name, shown, describeRange(f, min, max))
		}
	})
	return bad
}

// flagNumber is a numeric flag's value (a duration in seconds) and how to
// show it.
func flagNumber(f *pflag.Flag) (float64, string, error) {
	s := f.Value.String()
	if f.Value.Type() == "duration" {
		d, err := time.ParseDuration(s)
		return d.Seconds(), s, err
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, s, err
}

func describeRange(f *pflag.Flag, min, max float64) string {
	show := func(v float64) string {
		if f.Value.Type() == "duration" {
			return time.Duration(v * float64(time.Second)).String()
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	switch {
	case math.IsInf(max, 1) && math.IsInf(min, -1):
		return "a number"
	case math.IsInf(max, 1):
		return "at least " + show(min)
	case math.IsInf(min, -1):
		return "at most " + show(max)
	}
	return show(min) + " to " + show(max)
}

func orList(words []string) string {
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
