package main

import (
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// sampleArgs are positional arguments that get each command past cobra's
// argument check to its flags (a command not listed takes none).
var sampleArgs = map[string][]string{
	"rocelab perf":             {"write"},
	"rocelab collective":       {"allreduce"},
	"rocelab capture":          {"rtsw1:p1"},
	"rocelab fault add":        {"rtsw1", "loss", "1%"},
	"rocelab exec":             {"host1", "--", "true"},
	"rocelab run":              {"scenario.yaml"},
	"rocelab validate":         {"topology.yaml"},
	"rocelab wire decode":      {"frames.pcap"},
	"rocelab restart":          {"rtsw1"},
	"rocelab topo generate":    {},
	"rocelab compliance":       {},
	"rocelab fault clear":      {"--all"},
	"rocelab dashboard":        {},
	"rocelab agent":            {},
	"rocelab kube controller":  {},
	"rocelab topo scale-table": {},
}

// TestFlagRanges is the exit-code rule for every flag of every command,
// generated from the command tree so that a new flag cannot escape it:
// each numeric flag declares its range (limit), and a value just outside
// it (and an absurd one) exits 2 with a sentence naming the flag, before
// anything runs; each flag with words (oneOf) refuses another word so.
func TestFlagRanges(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() {
			return
		}
		path := c.CommandPath()
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden && f.Name != "root" {
				return
			}
			for _, v := range badValues(t, path, f) {
				args := append(strings.Fields(path)[1:], "--"+f.Name+"="+v)
				args = append(args, sampleArgs[path]...)
				code, _, stderr, err := runCLI(args...)
				if code != 2 || !strings.Contains(stderr+errString(err), "--"+f.Name) {
					t.Errorf("%s --%s=%s: exit %d (%v), want 2 naming --%s", path, f.Name, v, code, err, f.Name)
				}
			}
		})
	}
	walk(root)
}

// badValues are values flag f must refuse: outside its range, or a word
// not among its words.
func badValues(t *testing.T, path string, f *pflag.Flag) []string {
	if words := f.Annotations[enumAnnotation]; len(words) > 0 {
		return []string{"no-such-" + f.Name}
	}
	if f.Name == "name" && f.Annotations[notLabAnnotation] == nil {
		return []string{"", "abuse-1/.", strings.Repeat("x", 49)}
	}
	if !numericFlag(f) {
		return nil
	}
	min, max, ok := flagRange(f)
	if !ok {
		t.Errorf("%s --%s (%s) declares no range: call limit() where the flag is made", path, f.Name, f.Value.Type())
		return nil
	}
	show := func(v float64) string {
		if f.Value.Type() == "duration" {
			return time.Duration(v * float64(time.Second)).String()
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	step := 1.0
	if strings.HasPrefix(f.Value.Type(), "float") {
		step = 1e-3
	}
	if f.Value.Type() == "duration" {
		step = 1e-9
	}
	var out []string
	if !math.IsInf(min, -1) && !(strings.HasPrefix(f.Value.Type(), "uint") && min == 0) {
		out = append(out, show(min-step))
	}
	if !math.IsInf(max, 1) {
		out = append(out, show(max+step))
	}
	if f.Value.Type() == "int" || f.Value.Type() == "int64" {
		if math.IsInf(max, 1) || max < 1e15 {
			out = append(out, "9223372036854775807")
		}
	}
	return out
}
