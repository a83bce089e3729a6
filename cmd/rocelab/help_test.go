package main

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// walkCommands calls fn on root and every command under it, hidden ones
// included.
func walkCommands(root *cobra.Command, fn func(*cobra.Command)) {
	fn(root)
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		walkCommands(c, fn)
	}
}

func TestEveryCommandHasExample(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	walkCommands(root, func(c *cobra.Command) {
		if !c.Runnable() {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s: no Example in its --help", c.CommandPath())
		}
	})
}

// TestExamplesParse holds every Example line that runs rocelab to the
// command tree: cobra finds the command and parses its flags, so a line
// pasted from --help is not refused for its spelling.
func TestExamplesParse(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	walkCommands(root, func(c *cobra.Command) {
		for _, line := range strings.Split(c.Example, "\n") {
			args, ok := commandLine(line)
			if !ok {
				continue
			}
			if err := parseCommandLine(args); err != nil {
				t.Errorf("%s: Example %q: %v", c.CommandPath(), strings.TrimSpace(line), err)
			}
			for _, missing := range missingRepoFiles(args) {
				t.Errorf("%s: Example %q: %s is not in the repository", c.CommandPath(), strings.TrimSpace(line), missing)
			}
		}
	})
}

// missingRepoFiles returns the arguments that name a shipped file
// (examples/…, topologies/…) the repository does not have.
func missingRepoFiles(args []string) []string {
	var missing []string
	for _, a := range args {
		if !strings.HasPrefix(a, "examples/") && !strings.HasPrefix(a, "topologies/") {
			continue
		}
		if _, err := os.Stat(filepath.Join("..", "..", a)); err != nil {
			missing = append(missing, a)
		}
	}
	return missing
}

// commandLine splits a shell line that runs rocelab ("rocelab perf …",
// "$ rocelab …", "sudo rocelab …") into its arguments after "rocelab":
// single and double quotes group, a "#" word starts a comment, and a
// pipe, "&", ";" or redirection ends the command.
func commandLine(line string) ([]string, bool) {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "$ ")
	line = strings.TrimPrefix(line, "sudo ")
	if !strings.HasPrefix(line, "rocelab ") {
		return nil, false
	}
	var args []string
	var cur strings.Builder
	var quote rune
	inWord := false
	flush := func() {
		if inWord {
			args = append(args, cur.String())
		}
		cur.Reset()
		inWord = false
	}
loop:
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			flush()
		case (r == '#' && !inWord) || r == '|' || r == '&' || r == ';' || r == '>' || r == '<':
			break loop
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	flush()
	return args[1:], true
}

// parseCommandLine finds args' command in a fresh tree and parses its
// flags, as Execute would before running it.
func parseCommandLine(args []string) error {
	root := newRootCmd(io.Discard, io.Discard)
	c, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if !c.Runnable() {
		return &usageErr{c.CommandPath() + " is not a command that runs"}
	}
	if err := c.ParseFlags(rest); err != nil {
		return err
	}
	return c.ValidateArgs(c.Flags().Args())
}

type usageErr struct{ msg string }

func (e *usageErr) Error() string { return e.msg }

// TestShortFlagsOneMeaning refuses a shorthand that stands for two
// different flags in two commands (-w was --write and --watch).
func TestShortFlagsOneMeaning(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	meanings := map[string]map[string][]string{} // shorthand → long name → commands
	walkCommands(root, func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Shorthand == "" {
				return
			}
			if meanings[f.Shorthand] == nil {
				meanings[f.Shorthand] = map[string][]string{}
			}
			meanings[f.Shorthand][f.Name] = append(meanings[f.Shorthand][f.Name], c.CommandPath())
		})
	})
	for short, names := range meanings {
		if len(names) < 2 {
			continue
		}
		var says []string
		for name, cmds := range names {
			says = append(says, "--"+name+" in "+strings.Join(cmds, ", "))
		}
		sort.Strings(says)
		t.Errorf("-%s has %d meanings: %s", short, len(names), strings.Join(says, "; "))
	}
}

// isDurationFlag reports whether f takes a length of time.
func isDurationFlag(f *pflag.Flag) bool {
	if f.Value.Type() == "duration" {
		return true
	}
	for _, w := range []string{"duration", "interval", "timeout", "stall", "jitter"} {
		if strings.Contains(f.Name, w) {
			return true
		}
	}
	return false
}

// flagClock is the clock a duration flag's usage names: "fabric",
// "wall", or "" for none (or both).
func flagClock(usage string) string {
	u := strings.ToLower(usage)
	fabric := strings.Contains(u, "fabric time") || strings.Contains(u, "fabric clock")
	wall := strings.Contains(u, "wall clock") || strings.Contains(u, "wall-clock") || strings.Contains(u, "wall time")
	switch {
	case fabric && !wall:
		return "fabric"
	case wall && !fabric:
		return "wall"
	}
	return ""
}

// TestDurationFlagsNameTheirClock: a duration is fabric time (dilated by
// k in the emulation) or wall time; every duration flag's usage says
// which, and one flag name means one clock in every command.
func TestDurationFlagsNameTheirClock(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	clocks := map[string]map[string]string{} // name → clock → a command
	walkCommands(root, func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !isDurationFlag(f) || f.Deprecated != "" {
				return
			}
			clock := flagClock(f.Usage)
			if clock == "" {
				t.Errorf("%s --%s: usage %q names neither fabric time nor wall clock", c.CommandPath(), f.Name, f.Usage)
				return
			}
			if clocks[f.Name] == nil {
				clocks[f.Name] = map[string]string{}
			}
			clocks[f.Name][clock] = c.CommandPath()
		})
	})
	for name, by := range clocks {
		if len(by) > 1 {
			t.Errorf("--%s is fabric time in %s and wall clock in %s: one name, one clock", name, by["fabric"], by["wall"])
		}
	}
}

// TestCommandLineChecker holds the checker of Examples (and of the
// README's tour) to refusing what Execute would refuse.
func TestCommandLineChecker(t *testing.T) {
	for _, tc := range []struct {
		line   string
		isCmd  bool
		wantOK bool
	}{
		{"  rocelab perf write --from host1 --to host4", true, true},
		{"$ rocelab run --sim x.yaml --report out/   # a comment", true, true},
		{"rocelab fault add 'rtsw1->ctsw1' down", true, true},
		{"rocelab exec host1 -- ping -c 3 198.19.0.9 | head", true, true},
		{"rocelab perf write --form host1", true, false},
		{"rocelab stats -w", true, false},
		{"rocelab nosuch", true, false},
		{"rocelab topo", true, false},
		{"rocelab version extra", true, false},
		{"make demo", false, false},
	} {
		args, ok := commandLine(tc.line)
		if ok != tc.isCmd {
			t.Errorf("commandLine(%q): ok %v, want %v", tc.line, ok, tc.isCmd)
			continue
		}
		if !ok {
			continue
		}
		if err := parseCommandLine(args); (err == nil) != tc.wantOK {
			t.Errorf("parseCommandLine(%q) = %v, want ok %v", args, err, tc.wantOK)
		}
	}
}

// TestFormatIsOutput: --format json|table, as containerlab users type
// it, is -o; graph keeps its own --format.
func TestFormatIsOutput(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string
	}{
		{[]string{"version", "--format", "json"}, 0, `"version":`},
		{[]string{"version", "--format=json"}, 0, `"version":`},
		{[]string{"version", "--format", "table"}, 0, "rocelab "},
		{[]string{"version", "-o", "json", "--format", "json"}, 0, `"version":`},
		{[]string{"version", "-o", "table", "--format", "json"}, 2, ""},
		{[]string{"version", "--format", "yaml"}, 2, ""},
		{[]string{"graph", "--format", "mermaid"}, 0, "flowchart"},
	} {
		code, stdout, stderr, err := runCLI(tc.args...)
		if code != tc.code {
			t.Errorf("rocelab %s: exit %d (%v), want %d; stderr %s", strings.Join(tc.args, " "), code, err, tc.code, stderr)
			continue
		}
		if !strings.Contains(stdout, tc.stdout) {
			t.Errorf("rocelab %s: stdout lacks %q:\n%s", strings.Join(tc.args, " "), tc.stdout, stdout)
		}
	}
}

// TestStatsWatchShorthandGone: stats -w (once --watch) says what to type.
func TestStatsWatchShorthandGone(t *testing.T) {
	code, _, _, err := runCLI("stats", "-w")
	if code != 2 || err == nil || !strings.Contains(err.Error(), "--watch") {
		t.Fatalf("stats -w: exit %d, %v; want 2 and a word about --watch", code, err)
	}
}
