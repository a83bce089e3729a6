package run

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
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

// workersFaults adds a fault of every kind that schedules (loss, delay
// with jitter, a flap, a lower rate, a PFC storm), on links inside a zone
// and between zones, timed to start and end mid-run: the partitions must
// run them as one engine does.
const workersFaults = `faults:
  - {at: 5us, for: 30us, target: z1-ctsw1 to atsw1, kind: loss, params: "3%"}
  - {at: 0us, target: atsw2 to z2-ctsw2, kind: delay, params: "300ns jitter 200ns"}
  - {at: 10us, for: 20us, target: z2-rtsw1 and z2-ctsw1, kind: flap, params: "period 4us down 1us"}
  - {at: 8us, target: z1-rtsw2 to z1-ctsw3, kind: rate, params: "100G"}
  - {at: 12us, for: 6us, target: z2-host4:gpu0, kind: storm, params: "prio 3 quanta 65535 interval 2us"}
`

// workersBackground adds background traffic: an elephant across the
// zones, incast bursts inside the second zone (the ToR pauses the
// senders, and the generators obey their switches' PFC on the second
// zone's engine), and front-end traffic.
const workersBackground = `  - {name: bg, kind: background, pattern: elephant, from: z1-host2:gpu1, to: z2-host2:gpu1, rate: 200G, duration: 40us}
  - {name: burst, kind: background, pattern: incast, from: "z2-host[5-8]:gpu2", to: z2-host1:gpu2, size: 256KB, interval: 20us, duration: 45us}
  - {name: fe, kind: fe, pattern: stream, from: z1-host1:fe0, to: z2-host3:fe0, rate: 50G, start: 5us, duration: 30us}
`

// workersStorm pauses a background generator of the second zone (z2-host5:
// gpu2's ToR port): the generator hears it on the second zone's engine.
const workersStorm = `faults:
  - {at: 10us, for: 20us, target: z2-rtsw3:p3, kind: storm, params: "prio 3 quanta 65535 interval 2us"}
`

// workersColl adds collectives across both zones: a ring all-reduce sweep
// of two sizes with a warm-up, and a hierarchical all-reduce that starts
// later.
const workersColl = `  - {name: ar, kind: collective, op: allreduce, ranks: "z1-host[1-4]:gpu0,z2-host[1-4]:gpu0", sizes: 64KB:128KB, iters: 1, warmup: 1}
  - {name: hr, kind: collective, op: hier-allreduce, group: 2, ranks: "z1-host[5-6]:gpu[0-1],z2-host[5-6]:gpu[0-1]", sizes: 512KB, start: 4us}
`

// TestSimWorkersGiveOneWorkerResults runs perf scenarios, with and
// without faults, background traffic and collectives, on one worker and
// on two: the snapshots, the series, the verdict and the event count must
// be the same.
func TestSimWorkersGiveOneWorkerResults(t *testing.T) {
	events := map[string]uint64{}
	for _, tc := range []struct{ name, src string }{
		{"perf", workersScenario},
		{"perf and faults", workersScenario + workersFaults},
		{"perf and background", strings.Replace(workersScenario, "expect:", workersBackground+"expect:", 1) + workersStorm},
		{"perf and collectives", strings.Replace(strings.Replace(workersScenario, "expect:", workersColl+"expect:", 1),
			"duration: 60us", "duration: 400us", 1) + "  - busbw(job=ar) > 0\n  - busbw(job=hr) > 0\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := scenario.Parse("workers.yaml", []byte(tc.src))
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
			if !reflect.DeepEqual(one.Problems, two.Problems) {
				t.Errorf("problems: one worker %q, two %q", one.Problems, two.Problems)
			}
			for _, p := range one.Problems {
				if strings.Contains(p, "fault") {
					t.Errorf("problem: %s", p)
				}
			}
			events[tc.name] = one.Events
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
		})
	}
	for _, with := range []string{"perf and faults", "perf and background", "perf and collectives"} {
		if events["perf"] == events[with] {
			t.Errorf("%s: the additions changed nothing: %d events", with, events["perf"])
		}
	}
}

func TestCheckWorkers(t *testing.T) {
	for _, tc := range []struct {
		name, topology, workloads, faults, want string
	}{
		{"perf only", "", "  - {name: p, kind: perf, from: host1:gpu0, to: host2:gpu0, size: 4KB}\n", "", ""},
		{"collective", "", "  - {name: ar, kind: collective, op: allreduce, ranks: \"host[1-4]:gpu[0-1]\", sizes: 1MB}\n", "", ""},
		{"hierarchical", "", "  - {name: h, kind: collective, op: hier-allreduce, group: 2, ranks: \"host[1-4]:gpu[0-1]\", sizes: 1MB}\n", "", ""},
		{"all-to-all of 8", "", "  - {name: a2a, kind: collective, op: alltoall, ranks: \"host[1-4]:gpu[0-1]\", sizes: 1MB}\n", "", ""},
		{"all-to-all of 512", "ai-zone-64", "  - {name: a2a, kind: collective, op: alltoall, ranks: \"host[1-64]:gpu[0-7]\", sizes: 1MB}\n", "", "collective a2a"},
		{"background", "", "  - {name: bg, kind: background, pattern: elephant, from: host1:gpu0, to: host2:gpu0, duration: 10us}\n", "", ""},
		{"faults", "", "  - {name: p, kind: perf, from: host1:gpu0, to: host2:gpu0, size: 4KB}\n",
			"faults:\n  - {at: 10us, target: rtsw1 to host1, kind: loss, params: \"1%\"}\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo := cmp.Or(tc.topology, "laptop")
			src := "name: w\ntopology: " + topo + "\nduration: 50us\nworkloads:\n" + tc.workloads + tc.faults
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

func TestAutoWorkers(t *testing.T) {
	perf := "  - {name: p, kind: perf, from: host1:gpu0, to: host2:gpu0, size: 4KB}\n"
	coll := "  - {name: ar, kind: collective, op: allreduce, ranks: \"host[1-4]:gpu[0-1]\", sizes: 1MB}\n"
	a2a := "  - {name: a2a, kind: collective, op: alltoall, ranks: \"host[1-64]:gpu[0-7]\", sizes: 1MB}\n"
	for _, tc := range []struct {
		name, workloads string
		cpus, want      int
	}{
		{"perf on two CPUs", perf, 2, 2},
		{"perf on eight", perf, 8, 8},
		{"perf on one", perf, 1, 1},
		{"a collective", perf + coll, 2, 2},
		{"an all-to-all of 512", a2a, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := scenario.Parse("w.yaml", []byte("name: w\ntopology: ai-zone-64\nduration: 50us\nworkloads:\n"+strings.ReplaceAll(tc.workloads, "host[1-4]", "host[1-2]")))
			if err != nil {
				t.Fatal(err)
			}
			if got := AutoWorkers(sc, tc.cpus); got != tc.want {
				t.Errorf("AutoWorkers(%d CPUs) = %d, want %d", tc.cpus, got, tc.want)
			}
		})
	}
}

// crossZoneTopology puts a NIC (h1:gpu0, zone 1) on a switch of the
// other zone (s2), so that its traffic generator and its switch run on
// different partitions.
const crossZoneTopology = `name: crosszone
defaults:
  be: {rate: 100G, delay: 1us, mtu: 4200}
nodes:
  h1: {kind: host, gpus: 1, zone: 1, frontend: false}
  h3: {kind: host, gpus: 1, zone: 1, frontend: false}
  h2: {kind: host, gpus: 1, zone: 2, frontend: false}
  s1: {kind: switch, role: rtsw, zone: 1}
  s2: {kind: switch, role: rtsw, zone: 2}
links:
  - h1:gpu0 -- s2:p1
  - h2:gpu0 -- s2:p2
  - h3:gpu0 -- s1:p1
  - s1:p2 -- s2:p3
`

// TestSimWorkersGeneratorAcrossPartitions: a background generator on a
// NIC whose switch runs on another partition still hears that switch's
// PFC (a storm from the switch's port, which pauses it) as one engine has
// it: the run cut in two on one goroutine and on two gives one engine's
// snapshots and event count.
func TestSimWorkersGeneratorAcrossPartitions(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "crosszone.yaml"), []byte(crossZoneTopology), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `name: crossgen
topology: crosszone.yaml
duration: 40us
seed: 3
workloads:
  - {name: bg, kind: background, pattern: elephant, from: h1:gpu0, to: h2:gpu0, rate: 100G, duration: 35us}
  - {name: p, kind: perf, from: h3:gpu0, to: h2:gpu0, size: 64KB, iters: 4}
faults:
  - {at: 5us, for: 10us, target: s2:p1, kind: storm, params: "prio 3 quanta 65535 interval 1us"}
`
	path := filepath.Join(dir, "crossgen.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	one, err := Sim(context.Background(), sc, Options{Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{1, 2} {
		out, err := Sim(context.Background(), sc, Options{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if out.Partitions != 2 {
			t.Fatalf("%d workers: %d partitions, want 2 (one per zone)", w, out.Partitions)
		}
		if out.Events != one.Events {
			t.Errorf("%d workers: %d events, one engine %d", w, out.Events, one.Events)
		}
		if !reflect.DeepEqual(out.Snapshots, one.Snapshots) {
			t.Errorf("%d workers: the snapshots differ from one engine's", w)
		}
	}
}
