package scenario

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpectationSamples(t *testing.T) {
	env := testEnv(t)
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{"drops == 0", []string{"switch_drop_packets_total"}},
		{"pfc_rx > 0", []string{"nic_pfc_rx_frames_total", "switch_queue_pfc_rx_frames_total"}},
		{"not pfc_rx(node=rtsw1) > 0 or -queue_depth < 1KB", []string{"switch_queue_depth_bytes", "switch_queue_pfc_rx_frames_total"}},
		{"(drops + drops) * 2 < busbw(job=train) / line_rate", []string{"collective_busbw_bytes_per_second", "switch_drop_packets_total"}},
		{"p99(fct) < 2ms and flow_slowdown < 3", []string{"flow_fct_seconds", "flow_slowdown_ratio"}},
		{"1 < 2", nil},
	} {
		x, err := CompileExpectation(tc.src, env)
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		if diff := cmp.Diff(tc.want, x.Samples()); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.src, diff)
		}
	}
}
