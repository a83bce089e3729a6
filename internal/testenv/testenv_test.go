package testenv

import "testing"

func TestInCI(t *testing.T) {
	tests := []struct {
		env  string
		want bool
	}{
		{"", false}, {"false", false}, {"0", false}, {"true", true}, {"1", true}, {"yes", true},
	}
	for _, tc := range tests {
		t.Setenv("CI", tc.env)
		if got := InCI(); got != tc.want {
			t.Errorf("CI=%q: InCI() = %v, want %v", tc.env, got, tc.want)
		}
	}
}

// fakeTB records whether the helper skipped or failed.
type fakeTB struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Skipf(string, ...any)  { f.skipped = true }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }

func TestMissingToolFailsInCI(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		tb := &fakeTB{}
		RequireTool(tb, "rocelab-no-such-tool-xyz")
		if ci == "" && (!tb.skipped || tb.failed) {
			t.Errorf("outside CI: skipped=%v failed=%v, want a skip", tb.skipped, tb.failed)
		}
		if ci != "" && (!tb.failed || tb.skipped) {
			t.Errorf("in CI: skipped=%v failed=%v, want a failure", tb.skipped, tb.failed)
		}
	}
}
