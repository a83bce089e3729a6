package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/lab/compliance"
)

// readmeCodeLines returns the lines of the README's sh and console blocks.
func readmeCodeLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatalf("read README: %v", err)
	}
	var lines []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "```sh") || strings.HasPrefix(l, "```console"):
			in = true
		case strings.HasPrefix(l, "```"):
			in = false
		case in:
			lines = append(lines, l)
		}
	}
	return lines
}

// TestReadmeCommandsParse: every rocelab command of the README's tour
// names a command and flags the CLI has, and files the repository ships.
func TestReadmeCommandsParse(t *testing.T) {
	n := 0
	for _, line := range readmeCodeLines(t) {
		args, ok := commandLine(line)
		if !ok {
			continue
		}
		n++
		if err := parseCommandLine(args); err != nil {
			t.Errorf("README: %q: %v", strings.TrimSpace(line), err)
		}
		for _, missing := range missingRepoFiles(args) {
			t.Errorf("README: %q: %s is not in the repository", strings.TrimSpace(line), missing)
		}
	}
	if n < 10 {
		t.Errorf("README: found %d rocelab commands in its code blocks; the tour has more", n)
	}
}

// TestReadmeTourDestroysItsOwnLab: on a shared machine destroy --all
// removes everyone's labs; the tour destroys the lab it deployed.
func TestReadmeTourDestroysItsOwnLab(t *testing.T) {
	destroys := 0
	for _, line := range readmeCodeLines(t) {
		args, ok := commandLine(line)
		if !ok || len(args) == 0 || args[0] != "destroy" {
			continue
		}
		destroys++
		for _, a := range args {
			if a == "--all" {
				t.Errorf("README: %q destroys every lab on the machine; destroy the tour's lab by name", strings.TrimSpace(line))
			}
		}
	}
	if destroys == 0 {
		t.Error("README: the tour never destroys its lab")
	}
}

// TestReadmeNumbers holds the README's counts to what the code has.
func TestReadmeNumbers(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatalf("read README: %v", err)
	}
	// The README wraps lines: read it as one.
	text := strings.Join(strings.Fields(string(b)), " ")
	examples, err := filepath.Glob(filepath.Join("..", "..", "examples", "[0-9][0-9]-*", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what string
		re   string // its first group is the number
		want int
	}{
		{"compliance cases", `compliance suite: (\d+) black-box cases`, len(compliance.Cases())},
		{"compliance cases with --iut node", `all (\d+) cases`, len(compliance.Cases())},
		{"mutants", `(\d+) mutants of the endpoint`, len(endpoint.Mutants())},
		{"trainer scenarios", `has (\w+) trainer scenarios`, len(examples)},
	} {
		m := regexp.MustCompile(tc.re).FindAllStringSubmatch(text, -1)
		if len(m) == 0 {
			t.Errorf("README: no %q for the number of %s (reworded? update this test)", tc.re, tc.what)
			continue
		}
		for _, sm := range m {
			got, ok := number(sm[1])
			if !ok {
				t.Errorf("README: %q: %q is not a number", sm[0], sm[1])
				continue
			}
			if got != tc.want {
				t.Errorf("README says %q: the code has %d %s", sm[0], tc.want, tc.what)
			}
		}
	}
}

// TestDocsNumbers: docs/compliance.md's count of the suite's cases is the
// registry's.
func TestDocsNumbers(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "compliance.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	for _, re := range []string{`the (\d+) cases take`, `All (\d+) cases pass against the node`} {
		m := regexp.MustCompile(re).FindStringSubmatch(text)
		if m == nil {
			t.Errorf("docs/compliance.md: no %q (reworded? update this test)", re)
			continue
		}
		if n, _ := number(m[1]); n != len(compliance.Cases()) {
			t.Errorf("docs/compliance.md says %q: the code has %d cases", m[0], len(compliance.Cases()))
		}
	}
}

// number reads a count written in digits or as an English word.
func number(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
	for i, w := range words {
		if strings.EqualFold(s, w) {
			return i, true
		}
	}
	return 0, false
}
