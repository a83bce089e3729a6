package main

import (
	"strings"
	"testing"
)

// TestComplianceUsage: flags that do not belong to the chosen IUT are bad
// usage (exit 2) before anything runs; the in-process suite passes (0).
func TestComplianceUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		say  string
	}{
		{[]string{"compliance", "--iut", "lab"}, 2, "needs --node"},
		{[]string{"compliance", "--node", "host1"}, 2, "apply to --iut lab"},
		{[]string{"compliance", "--iut", "node", "--node", "host1"}, 2, "apply to --iut lab"},
		{[]string{"compliance", "--iut", "lab", "--node", "host1", "--scale", "10"}, 2, "--scale and --mutant do not apply"},
		{[]string{"compliance", "--iut", "nic"}, 2, "want inproc, node or lab"},
		{[]string{"compliance", "--iut", "lab", "--node", ":gpu1"}, 2, "want NODE or NODE:NIC"},
		{[]string{"compliance", "--iut", "lab", "--node", "host1:"}, 2, "want NODE or NODE:NIC"},
		{[]string{"compliance", "--root", "/tmp/x"}, 2, "--root applies to --iut lab"},
		{[]string{"compliance", "--case", "wire/"}, 0, "every MUST passed: true"},
	} {
		code, stdout, stderr, err := runCLI(tc.args...)
		if code != tc.code || !strings.Contains(stdout+stderr+errString(err), tc.say) {
			t.Errorf("%v: exit %d (%v), want %d saying %q; stdout:\n%s", tc.args, code, err, tc.code, tc.say, stdout)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
