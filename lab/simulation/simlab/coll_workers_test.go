package simlab

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
)

// TestCollectivesOnPartitions runs collectives on two-zones.yaml (128
// GPUs, one partition per zone) on one engine, then cut in two on one
// goroutine and on two: every result, every sample of the lab's
// telemetry, the event count and the fabric time must be the same. The
// cases cross iteration and size boundaries (where the coordinator starts
// the next iteration on every rank at once), phases of a hierarchical
// all-reduce, a perf job beside a collective, real data checked, and an
// all-to-all over pairs connected up front.
func TestCollectivesOnPartitions(t *testing.T) {
	for _, tc := range collCases() {
		t.Run(tc.name, func(t *testing.T) { tc.compare(t, 1, 2) })
	}
}

// TestWorkersRaceCollectives is the part of TestCollectivesOnPartitions
// that make race runs: two of its cases, on two workers.
func TestWorkersRaceCollectives(t *testing.T) {
	for _, tc := range collCases() {
		if tc.name == "all_reduce checked" || tc.name == "hierarchical" {
			t.Run(tc.name, func(t *testing.T) { tc.compare(t, 2) })
		}
	}
}

// collCase is a set of jobs to run on one engine and on partitions.
type collCase struct {
	name string
	raw  bool
	add  func(l *Lab) ([]func() string, error)
}

func collCases() []collCase {
	every := func(n int) []string {
		var out []string
		for z := 1; z <= 2; z++ {
			for h := 1; h <= n; h++ {
				out = append(out, fmt.Sprintf("z%d-host%d:gpu%d", z, h, h%8))
			}
		}
		return out
	}
	return []collCase{
		{"all_reduce sweep beside perf", false, func(l *Lab) ([]func() string, error) {
			c, err := l.Collective(CollSpec{Op: "all_reduce", Sizes: []int64{256 << 10, 1 << 20}, Warmup: 1, Iters: 2, SliceBytes: 64 << 10})
			if err != nil {
				return nil, err
			}
			p, err := l.Perf(PerfSpec{Name: "side", From: []string{"z1-host1:gpu0"}, To: []string{"z2-host3:gpu0"}, Size: 256 << 10, Iterations: 4})
			if err != nil {
				return nil, err
			}
			return []func() string{collResults(c), func() string { return fmt.Sprintf("%+v %v", p.Results(), p.Err()) }}, nil
		}},
		{"all_gather and reduce_scatter", false, func(l *Lab) ([]func() string, error) {
			ag, err := l.Collective(CollSpec{Op: "all_gather", Ranks: every(8), Sizes: []int64{512 << 10}, Iters: 3})
			if err != nil {
				return nil, err
			}
			rs, err := l.Collective(CollSpec{Op: "reduce_scatter", Ranks: every(4), Sizes: []int64{512 << 10}, Iters: 2, Start: clock.Time(3 * clock.Microsecond)})
			if err != nil {
				return nil, err
			}
			return []func() string{collResults(ag), collResults(rs)}, nil
		}},
		{"all_reduce checked", true, func(l *Lab) ([]func() string, error) {
			c, err := l.Collective(CollSpec{Op: "all_reduce", Ranks: every(4), Sizes: []int64{64 << 10}, Iters: 2, Check: true, SliceBytes: 8 << 10})
			if err != nil {
				return nil, err
			}
			return []func() string{collResults(c)}, nil
		}},
		{"alltoall", false, func(l *Lab) ([]func() string, error) {
			c, err := l.Collective(CollSpec{Op: "alltoall", Sizes: []int64{1 << 20}, Iters: 1})
			if err != nil {
				return nil, err
			}
			return []func() string{collResults(c)}, nil
		}},
		{"hierarchical", false, func(l *Lab) ([]func() string, error) {
			h, err := l.Hierarchical(HierSpec{GroupSize: 8, Size: 2 << 20})
			if err != nil {
				return nil, err
			}
			return []func() string{func() string { return fmt.Sprintf("%+v %v", h.Result(), h.Err()) }}, nil
		}},
	}
}

// compare runs tc on one engine and on two partitions on each number of
// workers: the results, samples, events and time must be the same.
func (tc collCase) compare(t *testing.T, workers ...int) {
	run := func(workers, partitions int) (string, *Lab) {
		l := build(t, "two-zones", Options{Seed: 7, Raw: tc.raw, Workers: workers, Partitions: partitions})
		defer l.Close()
		results, err := tc.add(l)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.RunUntilIdle(clock.Second); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, r := range results {
			b.WriteString(r())
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "now %v, %d events\n", l.Now(), l.Executed())
		for _, s := range l.Samples() {
			fmt.Fprintf(&b, "%s %v %g\n", s.Name, s.Labels, s.Value)
		}
		return b.String(), l
	}
	want, one := run(1, 1)
	if one.Partitions() != 1 {
		t.Fatalf("one engine: %d partitions", one.Partitions())
	}
	if strings.Contains(want, "error") || !strings.Contains(want, "collective_bus") && tc.name != "hierarchical" {
		t.Fatalf("the reference run did not complete cleanly:\n%.600s", want)
	}
	for _, w := range workers {
		got, l := run(w, 2)
		if l.Partitions() != 2 || l.Workers() != w {
			t.Errorf("%d workers asked: %d used on %d partitions, want 2 partitions", w, l.Workers(), l.Partitions())
		}
		if got != want {
			t.Errorf("%d workers: differs from one engine\n%s", w, firstDiff(got, want))
		}
	}
}

// collResults returns a collective job's results, as text.
func collResults(j *CollJob) func() string {
	return func() string { return fmt.Sprintf("%s %+v %v %v", j.Name(), j.Results(), j.Err(), j.Elapsed()) }
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got %s\nwant %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}
