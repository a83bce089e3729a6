package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateChakra: validate --chakra summarises a folder of traces, and
// names the file of a problem with exit 2: a missing rank, a truncated
// file, two prefixes with none chosen.
func TestValidateChakra(t *testing.T) {
	fixture := filepath.Join("..", "..", "workloads", "chakra", "testdata")
	copyRanks := func(t *testing.T, ranks ...string) string {
		dir := t.TempDir()
		for _, r := range ranks {
			b, err := os.ReadFile(filepath.Join(fixture, "allreduce."+r+".et"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "allreduce."+r+".et"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	truncated := copyRanks(t, "0", "1", "2", "3")
	b, _ := os.ReadFile(filepath.Join(truncated, "allreduce.2.et"))
	os.WriteFile(filepath.Join(truncated, "allreduce.2.et"), b[:len(b)-3], 0o644)
	two := copyRanks(t, "0", "1", "2", "3")
	os.WriteFile(filepath.Join(two, "other.0.et"), b, 0o644)
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string // in stdout (code 0) or stderr
	}{
		{"ok", []string{"validate", "--chakra", fixture}, 0, "allreduce.*.et: ok — 4 ranks"},
		{"missing rank", []string{"validate", "--chakra", copyRanks(t, "0", "2")}, 2, "allreduce.1.et: rank 1 is missing"},
		{"truncated", []string{"validate", "--chakra", truncated}, 2, "allreduce.2.et"},
		{"two prefixes", []string{"validate", "--chakra", two}, 2, "traces of 2 prefixes (allreduce, other): say which with --prefix"},
		{"prefix chosen", []string{"validate", "--chakra", two, "--prefix", "allreduce"}, 0, "ok — 4 ranks"},
		{"with a topology", []string{"validate", "-t", "laptop", "--chakra", fixture}, 2, "a topology or --chakra, not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr, err := runCLI(tc.args...)
			got := stdout
			if tc.code != 0 {
				got = stderr // the problems, one a line; main prints err after them
				if err != nil {
					got += err.Error()
				}
			}
			if code != tc.code || !strings.Contains(got, tc.out) {
				t.Errorf("%v: exit %d, want %d; want %q in\nstdout: %s\nstderr: %s", tc.args, code, tc.code, tc.out, stdout, stderr)
			}
		})
	}
}
