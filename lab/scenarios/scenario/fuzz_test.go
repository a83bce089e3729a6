package scenario_test

import (
	"testing"

	"github.com/rocelab/rocelab/lab/scenarios/scenario"
)

// FuzzParse: a scenario file of any bytes is parsed or refused with an
// error, never a crash.
func FuzzParse(f *testing.F) {
	// Small seeds: a scenario names a topology, and a big one (an example's
	// ai-zone-64) makes every execution of the fuzzer slow.
	f.Add([]byte("name: x\ntopology: laptop\nduration: 1ms\nworkloads:\n  - {name: p, kind: perf, from: host1:gpu0, to: host4:gpu0, size: 64KB, duration: 500us}\nexpect:\n  - drops(class=lossless) == 0\n"))
	f.Add([]byte("name: x\ntopology: laptop\nduration: 1ms\nfaults:\n  - {at: 100us, target: rtsw1 to ctsw1, fault: loss 1%}\n"))
	f.Add([]byte("name: x\ntopology: laptop\nsteps:\n  - {at: -1s, perf: {from: host1, to: host4}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := scenario.Parse("fuzz.yaml", b); err == nil && s == nil {
			t.Fatal("no scenario and no error")
		}
	})
}
