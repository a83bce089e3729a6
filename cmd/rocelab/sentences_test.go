package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// slogLine matches a line of slog's text handler.
var slogLine = regexp.MustCompile(`(?m)^time=\S+ level=`)

// TestSentencesByDefault: without -v, commands print sentences, not
// log lines (they were "level=INFO msg=..." after graph -w and topo gen -w).
func TestSentencesByDefault(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string // in stdout
	}{
		{[]string{"graph", "-w", filepath.Join(dir, "g.svg")}, "wrote the svg drawing of laptop"},
		{[]string{"topo", "gen", "clos", "--hosts", "4", "-w", filepath.Join(dir, "z.yaml")}, "wrote topology clos"},
		{[]string{"wire", "samples", "-w", filepath.Join(dir, "s.pcap")}, "wrote"},
		{[]string{"validate"}, "ok"},
		{[]string{"compliance", "--case", "wire/*"}, ""},
	} {
		code, stdout, stderr, err := runCLI(tc.args...)
		if code != 0 {
			t.Errorf("rocelab %s: exit %d (%v): %s", strings.Join(tc.args, " "), code, err, stderr)
			continue
		}
		if !strings.Contains(stdout, tc.want) {
			t.Errorf("rocelab %s: stdout lacks %q:\n%s", strings.Join(tc.args, " "), tc.want, stdout)
		}
		if out := stdout + stderr; slogLine.MatchString(out) {
			t.Errorf("rocelab %s: a log line without -v:\n%s", strings.Join(tc.args, " "), out)
		}
	}
}

// TestNoInfoLogsInCommands: the commands log only at debug level (shown
// with -v); what a user should read is a sentence.
func TestNoInfoLogsInCommands(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	info := regexp.MustCompile(`opts\.log\.(Info|Warn|Error)\(`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if info.MatchString(l) {
				t.Errorf("%s:%d: %s: print a sentence (slog is for -v)", f, i+1, strings.TrimSpace(l))
			}
		}
	}
}
