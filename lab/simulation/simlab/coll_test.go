package simlab

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint/collective"
)

// TestAllReduceLaptop runs a checked all-reduce across the 8 GPUs of
// laptop.yaml on real bytes, and the same payload-free: the data must be
// right and the timing identical.
func TestAllReduceLaptop(t *testing.T) {
	var res [2][]collective.Result
	for i, raw := range []bool{true, false} {
		l := build(t, "laptop", Options{Seed: 1, Raw: raw})
		j, err := l.Collective(CollSpec{Op: "all_reduce", Sizes: []int64{256 << 10, 4 << 20}, Warmup: 1, Iters: 1, Check: raw})
		if err != nil {
			t.Fatal(err)
		}
		if err := l.RunUntilIdle(clock.Second); err != nil {
			t.Fatal(err)
		}
		if j.Err() != nil {
			t.Fatal(j.Err())
		}
		res[i] = j.Results()
		if len(res[i]) != 2 {
			t.Fatalf("%d results, want 2", len(res[i]))
		}
		for _, r := range res[i] {
			if r.Ranks != 8 || r.Checked != raw || r.Wrong != 0 {
				t.Errorf("raw %v: %+v", raw, r)
			}
		}
		// 4 MiB over 400G NICs: busbw near the 50 GB/s line rate.
		if bw := res[i][1].BusBW; bw < 0.75*50 || bw > 50 {
			t.Errorf("raw %v: 4 MiB busbw %.2f GB/s, want [37.5, 50]", raw, bw)
		}
		if d := telemetry.Sum(l.Samples(), "switch_drop_packets_total"); d != 0 {
			t.Errorf("%v drops", d)
		}
		if got := telemetry.Sum(l.Samples(), "collective_iterations_total", lbl("job", j.Name())); got != 4 {
			t.Errorf("telemetry: %v iterations, want 4", got)
		}
	}
	strip := func(rs []collective.Result) []collective.Result {
		out := append([]collective.Result(nil), rs...)
		for i := range out {
			out[i].Checked = false
		}
		return out
	}
	if d := cmp.Diff(strip(res[0]), strip(res[1])); d != "" {
		t.Errorf("raw and payload-free timings differ (-raw +free):\n%s", d)
	}
}

func TestCollectiveAllToAllMetaRoCE(t *testing.T) {
	l := build(t, "laptop", Options{Seed: 2, Mode: "metaroce"})
	j, err := l.Collective(CollSpec{Op: "alltoall", Sizes: []int64{1 << 20}, Iters: 1, Warmup: -1, Paths: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.RunUntilIdle(clock.Second); err != nil || j.Err() != nil {
		t.Fatal(err, j.Err())
	}
	if r := j.Results(); len(r) != 1 || r[0].BusBW <= 0 || r[0].Warmup != 0 {
		t.Errorf("results %+v", r)
	}
}

func TestCollectiveErrors(t *testing.T) {
	l := build(t, "laptop", Options{})
	for _, tc := range []struct {
		spec CollSpec
		want string
	}{
		{CollSpec{Op: "broadcast"}, "unknown collective"},
		{CollSpec{Check: true}, "real bytes"},
		{CollSpec{Ranks: []string{"host1:gpu0", "nope:gpu0"}}, "no back-end NIC"},
		{CollSpec{Ranks: []string{"host1:gpu0"}}, "ranks"},
		{CollSpec{CC: "reno"}, "unknown congestion control"},
	} {
		if _, err := l.Collective(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one containing %q", tc.spec, err, tc.want)
		}
	}
}
