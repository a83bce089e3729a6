package simlab

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
)

// wireEff is the payload share of the wire for 4096-byte RoCEv2 WRITE
// packets without RETH (the middle packets of a message): 4096 payload in
// 14+20+8+12+4096+4 bytes, plus FCS, preamble and inter-frame gap.
const wireEff = 4096.0 / (14 + 20 + 8 + 12 + 4096 + 4 + 4 + 8 + 12)

func TestPerfLaptop(t *testing.T) {
	tests := []struct {
		name string
		spec PerfSpec
		min  float64 // Gb/s, per flow
	}{
		// host1 (rack 1) to host4 (rack 2): RTSW, CTSW, RTSW at 400G.
		{"write", PerfSpec{Op: "write", From: []string{"host1:gpu0"}, To: []string{"host4:gpu0"}, Iterations: 1000}, 0.9 * 400},
		{"read", PerfSpec{Op: "read", From: []string{"host1:gpu0"}, To: []string{"host4:gpu0"}, Iterations: 1000}, 0.9 * 400},
		{"send_metaroce", PerfSpec{Op: "send", From: []string{"host2:gpu1"}, To: []string{"host3:gpu0"}, Iterations: 1000, Mode: "metaroce"}, 0.9 * 400},
		{"write_dcqcn_2qps", PerfSpec{Op: "write", From: []string{"host1:gpu1"}, To: []string{"host4:gpu1"}, Iterations: 500, QPs: 2, CC: "dcqcn"}, 0.9 * 400},
		// Two flows into one NIC share its 400G.
		{"two_to_one", PerfSpec{Op: "write", From: []string{"host1:gpu0", "host2:gpu0"}, To: []string{"host3:gpu0"}, Duration: 300 * clock.Microsecond}, 0.45 * 400 * wireEff},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := build(t, "laptop", Options{Seed: 3})
			j, err := l.Perf(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.RunUntilIdle(100 * clock.Millisecond); err != nil {
				t.Fatal(err)
			}
			if j.Err() != nil {
				t.Fatal(j.Err())
			}
			var total float64
			for _, r := range j.Results() {
				t.Logf("%s → %s: %.2f Gb/s, %d messages, FCT median %v p99 %v", r.From, r.To, r.GoodputGbps, r.Messages, r.FCT.Median, r.FCT.P99)
				if r.GoodputGbps < tc.min || r.GoodputGbps > 400 {
					t.Errorf("%s → %s: %.2f Gb/s, want [%.1f, 400]", r.From, r.To, r.GoodputGbps, tc.min)
				}
				if tc.spec.Iterations > 0 {
					want := int64(tc.spec.Iterations * max(tc.spec.QPs, 1))
					if r.Messages != want || r.FCT.Count != int(want) || r.Bytes != want*65536 {
						t.Errorf("%d messages, %d FCTs, %d bytes; want %d messages of 64 KiB", r.Messages, r.FCT.Count, r.Bytes, want)
					}
				}
				if r.FCT.Min <= 0 || r.FCT.Min > r.FCT.Median || r.FCT.Median > r.FCT.P99 || r.FCT.P99 > r.FCT.Max {
					t.Errorf("FCT stats out of order: %+v", r.FCT)
				}
				total += r.GoodputGbps
			}
			if total > 400 {
				t.Errorf("flows sum to %.2f Gb/s, more than the 400G NIC", total)
			}
			s := l.Samples()
			if d := telemetry.Sum(s, "switch_drop_packets_total"); d != 0 {
				t.Errorf("%v drops", d)
			}
			if r := telemetry.Sum(s, "qp_retransmits_total"); r != 0 {
				t.Errorf("%v retransmissions", r)
			}
		})
	}
}

func TestPerfErrors(t *testing.T) {
	tests := []struct {
		spec PerfSpec
		want string
	}{
		{PerfSpec{From: []string{"host1:gpu9"}, To: []string{"host4:gpu0"}}, "no back-end NIC"},
		{PerfSpec{From: []string{"host1:fe0"}, To: []string{"host4:gpu0"}}, "no back-end NIC"},
		{PerfSpec{Op: "atomic", From: []string{"host1:gpu0"}, To: []string{"host4:gpu0"}}, "unknown operation"},
		{PerfSpec{CC: "bbr", From: []string{"host1:gpu0"}, To: []string{"host4:gpu0"}}, "unknown congestion control"},
		{PerfSpec{Mode: "udp", From: []string{"host1:gpu0"}, To: []string{"host4:gpu0"}}, "unknown reliability mode"},
		{PerfSpec{From: []string{"host1:gpu0"}, To: []string{"host1:gpu0"}}, "no flows"},
		{PerfSpec{Pairwise: true, From: []string{"host1:gpu0"}, To: []string{"host4:gpu0", "host3:gpu0"}}, "pairwise"},
	}
	l := build(t, "laptop", Options{})
	for _, tc := range tests {
		_, err := l.Perf(tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one containing %q", tc.spec, err, tc.want)
		}
	}
	if l.Running() != 0 {
		t.Errorf("%d jobs registered by failed calls", l.Running())
	}
}

func TestRunUntilIdleLimit(t *testing.T) {
	l := build(t, "laptop", Options{})
	j, err := l.Perf(PerfSpec{From: []string{"host1:gpu0"}, To: []string{"host4:gpu0"}, Iterations: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.RunUntilIdle(10 * clock.Microsecond); err == nil || !strings.Contains(err.Error(), "unfinished") {
		t.Fatalf("RunUntilIdle with a 10 µs limit: %v, want an unfinished-job error", err)
	}
	if j.Done() {
		t.Fatal("job done after 10 µs")
	}
	var calls int
	l.opts.Progress = func(p Progress) { calls++ }
	if err := l.RunUntilIdle(0); err != nil {
		t.Fatal(err)
	}
	if !j.Done() || calls == 0 {
		t.Errorf("done %v after %d progress calls", j.Done(), calls)
	}
}

func TestRunAndStartTime(t *testing.T) {
	l := build(t, "laptop", Options{})
	j, err := l.Perf(PerfSpec{From: []string{"host1:gpu0"}, To: []string{"host2:gpu0"}, Iterations: 10, Start: clock.Time(50 * clock.Microsecond)})
	if err != nil {
		t.Fatal(err)
	}
	l.Run(40 * clock.Microsecond)
	if l.Now() != clock.Time(40*clock.Microsecond) || len(j.Flows()[0].FCTs()) != 0 {
		t.Fatalf("at %v: %d messages done before the start", l.Now(), len(j.Flows()[0].FCTs()))
	}
	l.Run(time(200))
	r := j.Results()[0]
	if !j.Done() || r.Start != clock.Time(50*clock.Microsecond) || r.End <= r.Start {
		t.Errorf("done %v, start %v end %v", j.Done(), r.Start, r.End)
	}
}

// time returns us microseconds as a Duration.
func time(us int) clock.Duration { return clock.Duration(us) * clock.Microsecond }

// TestCollectNamed: a lab collected by name (telemetry.CollectIf, which
// lets the NICs skip MetaRoCE's per-path samples) gives exactly the
// samples of a full collection with those names, in the same order.
func TestCollectNamed(t *testing.T) {
	l := build(t, "laptop", Options{Seed: 3})
	if _, err := l.Perf(PerfSpec{Op: "write", From: []string{"host2:gpu1"}, To: []string{"host3:gpu0"}, Iterations: 50, Mode: "metaroce", Paths: 8}); err != nil {
		t.Fatal(err)
	}
	if err := l.RunUntilIdle(100 * clock.Millisecond); err != nil {
		t.Fatal(err)
	}
	all := telemetry.Collect(l)
	for _, names := range [][]string{
		{"qp_outstanding_psns"},
		{"qp_path_lost_packets_total"},
		{"qp_path_rate_bytes_per_second", "switch_port_tx_bytes_total"},
		{"qp_tx_packets_total", "nic_tx_packets_total"},
	} {
		t.Run(strings.Join(names, ","), func(t *testing.T) {
			keep := func(name string) bool { return slices.Contains(names, name) }
			var want []telemetry.Sample
			for _, s := range all {
				if keep(s.Name) {
					want = append(want, s)
				}
			}
			got := telemetry.CollectIf(keep, l)
			if len(want) == 0 || !reflect.DeepEqual(got, want) {
				t.Errorf("collected by name: %d samples, filtered from all: %d (or they differ)", len(got), len(want))
			}
		})
	}
}
