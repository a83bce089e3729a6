package scenario_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rocelab/rocelab/lab/scenarios/scenario"
)

// FuzzParse: a scenario file of any bytes is parsed or refused with an
// error, never a crash.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../../../examples/*/scenario.yaml")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("name: x\ntopology: laptop\nsteps:\n  - {at: -1s, perf: {from: host1, to: host4}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := scenario.Parse("fuzz.yaml", b); err == nil && s == nil {
			t.Fatal("no scenario and no error")
		}
	})
}
