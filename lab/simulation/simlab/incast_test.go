package simlab

import (
	"fmt"
	"math"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
)

// runIncast runs the 8 → 1 incast of incast.yaml for 2 ms with a sampler.
func runIncast(t *testing.T, opts Options, cc string) (*Lab, *PerfJob, *Sampler) {
	t.Helper()
	l := build(t, "incast", opts)
	s := l.Sample(SamplerSpec{Interval: 10 * clock.Microsecond, MaxPoints: 64})
	j, err := l.Incast("receiver:gpu0", PerfSpec{Name: "incast", Duration: 2 * clock.Millisecond, CC: cc})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.RunUntilIdle(clock.Second); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	if j.Err() != nil {
		t.Fatal(j.Err())
	}
	return l, j, s
}

func TestIncastPFC(t *testing.T) {
	l, j, s := runIncast(t, Options{Seed: 7}, "none")
	r := l.IncastReport(j)
	t.Logf("total %.2f Gb/s, fairness %.3f, pause frames %d, pause time %v (NICs %v), drops %d", r.TotalGbps, r.Fairness, r.PauseFrames, r.PauseTime, r.NICPauseTime, r.Drops)
	for i := 1; i <= 8; i++ {
		name := fmt.Sprintf("sender%d:gpu0", i)
		t.Logf("  %s %.2f Gb/s", name, r.PerFlowGbps[name])
	}
	if len(r.PerFlowGbps) != 8 {
		t.Fatalf("%d senders in the report, want 8", len(r.PerFlowGbps))
	}
	// The receiver's 100G port is the bottleneck.
	bottleneck := 100 * wireEff
	if r.TotalGbps < 0.95*bottleneck || r.TotalGbps > 1.01*bottleneck {
		t.Errorf("senders sum to %.2f Gb/s, want ≈ %.2f (the receiver's port)", r.TotalGbps, bottleneck)
	}
	if r.Fairness > 1.3 {
		t.Errorf("max/min goodput %.3f > 1.3", r.Fairness)
	}
	if r.Drops != 0 {
		t.Errorf("%d drops on a lossless class", r.Drops)
	}
	if r.PauseFrames == 0 || r.PauseTime <= 0 || r.NICPauseTime <= 0 {
		t.Errorf("no pauses: %d frames, %v", r.PauseFrames, r.PauseTime)
	}

	// The same numbers through telemetry: the switch paused every sender.
	samples := l.Samples()
	for p := range 8 {
		port := telemetry.Label{Name: "port", Value: fmt.Sprint(p)}
		if n := telemetry.Sum(samples, "switch_port_pfc_tx_frames_total", port); n == 0 {
			t.Errorf("switch sent no PFC toward sender port %d", p)
		}
	}
	if got := telemetry.Sum(samples, "switch_port_pfc_tx_frames_total"); int64(got) != r.PauseFrames {
		t.Errorf("telemetry counts %v PFC frames, the report %d", got, r.PauseFrames)
	}
	if d := telemetry.Sum(samples, "switch_drop_packets_total"); d != 0 {
		t.Errorf("telemetry: %v drops", d)
	}

	// The sampler saw the queue toward the receiver build up, the PGs
	// of the sender ports go XOFF, and the flows share the bottleneck.
	st := s.Store()
	q, ok := st.Get("switch_queue_depth_bytes", lbl("node", "sw1"), lbl("port", "8"), lbl("tc", "3"))
	if !ok || q.Totals.Max <= 0 || len(q.Points) == 0 || len(q.Points) > 64 {
		t.Errorf("queue toward the receiver: found %v, max %v, %d points", ok, q.Totals.Max, len(q.Points))
	}
	xoff := st.Find("switch_pg_xoff", lbl("node", "sw1"), lbl("pg", "3"))
	var pausing int
	for _, x := range xoff {
		if x.Totals.Max == 1 {
			pausing++
		}
	}
	if pausing < 8 {
		t.Errorf("sampler saw %d sender ports pausing, want 8", pausing)
	}
	rates := st.Find("perf_flow_rate_bytes_per_second", lbl("job", "incast"))
	if len(rates) != 8 {
		t.Fatalf("%d flow rate series, want 8", len(rates))
	}
	// Rate × interval summed over the readings gives back the bytes (the
	// last reading, at Stop, covers less than an interval).
	var sampled, rx float64
	for _, x := range rates {
		sampled += x.Totals.Sum * 10e-6
	}
	for _, f := range j.Flows() {
		rx += float64(f.RxBytes())
	}
	if math.Abs(sampled-rx) > 0.01*rx {
		t.Errorf("sampled flow rates add up to %.0f bytes, the flows received %.0f", sampled, rx)
	}
}

func TestIncastDCQCN(t *testing.T) {
	l, j, _ := runIncast(t, Options{Seed: 7}, "dcqcn")
	r := l.IncastReport(j)
	ecn := telemetry.Sum(l.Samples(), "switch_queue_ecn_marked_packets_total")
	cnps := telemetry.Sum(l.Samples(), "nic_cnp_rx_total")
	t.Logf("dcqcn: total %.2f Gb/s, fairness %.3f, pause frames %d, ECN marks %v, CNPs %v", r.TotalGbps, r.Fairness, r.PauseFrames, ecn, cnps)
	if ecn == 0 || cnps == 0 {
		t.Errorf("%v ECN marks, %v CNPs: DCQCN saw no congestion", ecn, cnps)
	}
	if r.Drops != 0 || r.TotalGbps <= 0 || r.Fairness > 1.3 {
		t.Errorf("%d drops, %.2f Gb/s, fairness %.3f", r.Drops, r.TotalGbps, r.Fairness)
	}
}

func lbl(name, value string) telemetry.Label { return telemetry.Label{Name: name, Value: value} }
