package run

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/lab/scenarios/scenario"
)

// workersScenario is perf-only traffic across both zones of two-zones, so
// that the zones' partitions exchange packets and the ATSW layer queues.
const workersScenario = `name: workers
topology: two-zones
duration: 60us
seed: 7
workloads:
  - {name: cross, kind: perf, pattern: permutation, size: 64KB, iters: 2}
  - {name: late, kind: perf, from: z1-host1:gpu0, to: z2-host1:gpu0, size: 256KB, start: 20us}
expect:
  - count(fct(job=cross)) > 0
`

// TestSimWorkersGiveOneWorkerResults runs a perf scenario on one worker
// and on two: the snapshots, the series, the verdict and the event count
// must be the same.
func TestSimWorkersGiveOneWorkerResults(t *testing.T) {
	sc, err := scenario.Parse("workers.yaml", []byte(workersScenario))
	if err != nil {
		t.Fatal(err)
	}
	one, err := Sim(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	two, err := Sim(context.Background(), sc, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if one.Workers != 1 || two.Workers != 2 {
		t.Fatalf("ran on %d and %d workers, want 1 and 2", one.Workers, two.Workers)
	}
	if one.Events == 0 || one.Events != two.Events {
		t.Errorf("events: one worker %d, two %d", one.Events, two.Events)
	}
	if !reflect.DeepEqual(one.Snapshots, two.Snapshots) {
		t.Error("the snapshots differ between one worker and two")
	}
	if !reflect.DeepEqual(one.Series, two.Series) {
		t.Error("the series differ between one worker and two")
	}
	if !reflect.DeepEqual(one.Results, two.Results) {
		t.Errorf("results: one worker %+v, two %+v", one.Results, two.Results)
	}
}

func TestCheckWorkers(t *testing.T) {
	for _, tc := range []struct {
		name, workloads, faults, want string
	}{
		{"perf only", "  - {name: p, kind: perf, from: host1:gpu0, to: host2:gpu0, size: 4KB}\n", "", ""},
		{"collective", "  - {name: ar, kind: collective, op: allreduce, ranks: \"host[1-4]:gpu[0-1]\", sizes: 1MB}\n", "", "collective ar"},
		{"background", "  - {name: bg, kind: background, pattern: elephant, from: host1:gpu0, to: host2:gpu0, duration: 10us}\n", "", "background traffic bg"},
		{"faults", "  - {name: p, kind: perf, from: host1:gpu0, to: host2:gpu0, size: 4KB}\n",
			"faults:\n  - {at: 10us, target: rtsw1 to host1, kind: loss, params: \"1%\"}\n", "its faults"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "name: w\ntopology: laptop\nduration: 50us\nworkloads:\n" + tc.workloads + tc.faults
			sc, err := scenario.Parse("w.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckWorkers(sc, 1); err != nil {
				t.Errorf("one worker refused: %v", err)
			}
			err = CheckWorkers(sc, 2)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err = %v, want one naming %q", err, tc.want)
			}
		})
	}
}
