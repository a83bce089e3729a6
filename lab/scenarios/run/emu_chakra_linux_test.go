package run

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
)

// TestEmulateChakra runs ASTRA-sim's 1 MB microbenchmark traces, as they
// are, in both clocks on the laptop lab: each step (one collective) must
// take the same time within 5 %. Then the generated transformer step of
// examples/09-chakra runs in the emulation: its expectations hold, and
// both clocks' step times are logged (their operations overlap, which
// only the simulator's contention shows: docs/design.md).
func TestEmulateChakra(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.Exclusive(t)
	bin := testenv.BuildRocelab(t)
	root := testenv.RunRoot(t, "rltest-chk-")
	emulate := func(t *testing.T, sc *scenario.Scenario, i int) *Outcome {
		t.Helper()
		name := fmt.Sprintf("rc%d-%d", os.Getpid()%100000, i)
		var log strings.Builder
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		out, err := Emulate(ctx, sc, EmuOptions{LabName: name, Root: root, Binary: bin, Log: &log, Options: Options{NodeGroups: 1}})
		t.Logf("progress:\n%s", log.String())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range out.Problems {
			t.Errorf("problem: %s", p)
		}
		checkNothingLeft(t, name)
		return out
	}
	step := func(t *testing.T, o *Outcome) clock.Duration {
		t.Helper()
		if len(o.Jobs) != 1 || o.Jobs[0].Chakra == nil || len(o.Jobs[0].Chakra.Steps) != 1 {
			t.Fatalf("jobs %+v", o.Jobs)
		}
		return o.Jobs[0].Chakra.Steps[0].Iteration
	}
	i := 0
	for _, op := range []string{"all_reduce", "all_gather", "reduce_scatter", "all_to_all"} {
		for _, npus := range []int{4, 8} {
			i++
			t.Run(fmt.Sprintf("%s/%d", op, npus), func(t *testing.T) {
				sc, err := scenario.ChakraScenario(scenario.ChakraRun{Dir: filepath.Join("../../../examples/09-chakra/microbenchmarks", op, fmt.Sprintf("%dnpus_1MB", npus))})
				if err != nil {
					t.Fatal(err)
				}
				sim, err := Sim(context.Background(), sc, Options{})
				if err != nil {
					t.Fatal(err)
				}
				s, e := step(t, sim), step(t, emulate(t, sc, i))
				t.Logf("%s on %d NICs: simulation %v, emulation %v", op, npus, s, e)
				if d := math.Abs(float64(e-s)) / float64(s); d > 0.05 {
					t.Errorf("simulation %v, emulation %v: %.1f%% apart, want within 5%%", s, e, 100*d)
				}
			})
		}
	}
	t.Run("transformer-laptop", func(t *testing.T) {
		sc, err := scenario.Load("../../../examples/09-chakra/transformer-laptop.yaml")
		if err != nil {
			t.Fatal(err)
		}
		sim, err := Sim(context.Background(), sc, Options{})
		if err != nil {
			t.Fatal(err)
		}
		emu := emulate(t, sc, 100)
		for _, r := range emu.Results {
			if !r.Pass {
				t.Errorf("FAIL %s: %s", r.Expectation, r.Message)
			}
		}
		t.Logf("transformer step: simulation %v, emulation %v (its operations measured one at a time)", step(t, sim), step(t, emu))
	})
}
