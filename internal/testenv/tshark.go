package testenv

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TsharkFields reads capture path with tshark (a skip, or a failure under
// CI, without it) and returns, per frame, the values of fields (the first
// occurrence of each, "" where a frame has none); args go before the
// field list (-o preferences, --disable-heuristic, …).
func TsharkFields(tb testing.TB, path string, fields []string, args ...string) [][]string {
	tb.Helper()
	tshark := RequireTool(tb, "tshark")
	argv := append([]string{"-r", path, "-n"}, args...)
	argv = append(argv, "-T", "fields", "-E", "occurrence=f", "-E", "header=n")
	for _, f := range fields {
		argv = append(argv, "-e", f)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(tshark, argv...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("tshark: %v\n%s", err, stderr.String())
	}
	var frames [][]string
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if line != "" {
			frames = append(frames, strings.Split(line, "\t"))
		}
	}
	return frames
}
