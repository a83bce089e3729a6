package main

import (
	"strings"
	"testing"
)

// TestBadInputNoLab: bad words are refused with exit 2 and a sentence
// before any lab is looked for (none is deployed under this root).
func TestBadInputNoLab(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		args []string
		say  string
	}{
		{[]string{"fault", "add", "rtsw1", "loss", "-1%"}, "-1%: fault parameters are not negative"},
		{[]string{"fault", "add", "rtsw1", "delay", "-5us"}, "-5us: fault parameters are not negative"},
		{[]string{"perf", "write", "--from", "host1", "--to", "host2", "--iters", "-1"}, "--iters -1: want at least 1"},
		{[]string{"perf", "write", "--from", "host1", "--to", "host2", "--qps", "0"}, "--qps 0: want at least 1"},
		{[]string{"perf", "write", "--from", "host2:gpu0", "--to", "host3:gpu0", "--qps", "100000"}, "--qps 100000: at most 4096 QPs per NIC"},
		{[]string{"perf", "write", "--from", "host1", "--to", "host2", "--tx-depth", "-3"}, "--tx-depth -3: want at least 1"},
	} {
		code, _, stderr, err := runCLI(append(tc.args, "--root", root)...)
		if code != 2 || !strings.Contains(stderr+errString(err), tc.say) {
			t.Errorf("%v: exit %d (%v), want 2 saying %q", tc.args, code, err, tc.say)
		}
	}
}
