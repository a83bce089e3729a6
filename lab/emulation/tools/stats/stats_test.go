package stats

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/core/telemetry"
)

func smp(name string, v float64, kv ...string) telemetry.Sample {
	s := telemetry.Sample{Name: name, Value: v}
	for i := 0; i+1 < len(kv); i += 2 {
		s.Labels = append(s.Labels, telemetry.Label{Name: kv[i], Value: kv[i+1]})
	}
	return s
}

func snapAt(fabric, rxBytes, qBytes, ecn float64) Snapshot {
	return Snapshot{Node: "sw1", Samples: []telemetry.Sample{
		smp("emu_fabric_seconds_total", fabric, "node", "sw1"),
		smp("emu_rx_frames_total", 1, "node", "sw1", "port", "0", "ifname", "rle1-1p1"),
		smp("switch_port_rx_bytes_total", rxBytes, "node", "sw1", "port", "0"),
		smp("switch_port_tx_bytes_total", 0, "node", "sw1", "port", "0"),
		smp("switch_port_rx_bytes_total", 0, "node", "sw1", "port", "10"),
		smp("switch_port_rx_bytes_total", 0, "node", "sw1", "port", "2"),
		smp("switch_queue_tx_bytes_total", qBytes, "node", "sw1", "port", "0", "tc", "3"),
		smp("switch_queue_tx_bytes_total", 0, "node", "sw1", "port", "0", "tc", "0"),
		smp("switch_queue_depth_bytes", 4096, "node", "sw1", "port", "0", "tc", "3"),
		smp("switch_queue_peak_bytes", 9000, "node", "sw1", "port", "0", "tc", "3"),
		smp("switch_queue_ecn_marked_packets_total", ecn, "node", "sw1", "port", "0", "tc", "3"),
		smp("switch_pg_pfc_xoff_frames_total", 2, "node", "sw1", "port", "0", "pg", "3"),
		smp("switch_drop_packets_total", 5, "node", "sw1", "port", "0", "tc", "3", "reason", "no_headroom"),
		// A loss fault on p3 (index 2) dropped 4 packets: they count in
		// the port's drops; other events and other nodes' targets do not.
		smp("fault_packets_total", 4, "node", "sw1", "target", "sw1:p3", "fault", "f1", "kind", "loss", "event", "dropped"),
		smp("fault_packets_total", 9, "node", "sw1", "target", "sw1:p3", "fault", "f1", "kind", "loss", "event", "matched"),
		smp("fault_packets_total", 2, "node", "h1", "target", "h1:gpu0", "fault", "f1", "kind", "loss", "event", "dropped"),
		smp("qp_tx_bytes_total", 1000, "node", "h1:gpu0", "qp", "0x11"),
		smp("qp_retransmits_total", 3, "node", "h1:gpu0", "qp", "0x11"),
	}}
}

func TestCompute(t *testing.T) {
	tests := []struct {
		name       string
		prev, cur  Snapshot
		wantRx     float64
		wantQueues int
	}{
		// 1.25 GB in 0.1 s of fabric time is 100 Gb/s.
		{"two snapshots", snapAt(1, 0, 0, 0), snapAt(1.1, 1.25e9, 1.25e9, 7), 100e9, 1},
		// One snapshot: the average since fabric time 0.
		{"since start", Snapshot{}, snapAt(2, 25e9, 0, 0), 100e9, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Compute(tc.prev, tc.cur)
			// Ports are named p1…pN, as in every other command (their
			// telemetry labels are 0-based indexes).
			if len(r.Ports) != 3 || r.Ports[0].Port != "p1" || r.Ports[1].Port != "p3" || r.Ports[2].Port != "p11" {
				t.Fatalf("ports %+v", r.Ports)
			}
			if r.Ports[1].DropsTotal() != 4 || r.Ports[1].FaultPackets["dropped"] != 4 {
				t.Errorf("p3 drops %v, want the fault's 4", r.Ports[1].FaultPackets)
			}
			if r.Queues[0].Port != "p1" {
				t.Errorf("queue port %q, want p1", r.Queues[0].Port)
			}
			p := r.Ports[0]
			if diff := cmp.Diff(tc.wantRx, p.RxBps, cmp.Comparer(func(a, b float64) bool { return a-b < 1 && b-a < 1 })); diff != "" {
				t.Errorf("rx rate (-want +got):\n%s", diff)
			}
			if p.IfName != "rle1-1p1" || p.Depth != 4096 || p.Peak != 9000 || p.DropsTotal() != 5 || p.Drops["no_headroom"] != 5 {
				t.Errorf("port %+v", p)
			}
			if len(r.Queues) != tc.wantQueues || r.Queues[0].TC != "3" || r.Queues[0].PFCTx != 2 || r.Queues[0].Drops["no_headroom"] != 5 {
				t.Errorf("queues %+v", r.Queues)
			}
			if len(r.QPs) != 1 || r.QPs[0].Retransmits != 3 {
				t.Errorf("qps %+v", r.QPs)
			}
			var b bytes.Buffer
			if err := WriteTable(&b, r); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"rle1-1p1", "100 Gb/s", "no_headroom=5", "0x11"} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("table lacks %q:\n%s", want, b.String())
				}
			}
		})
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Rate(0), "0"}, {Rate(400e9), "400 Gb/s"}, {Rate(12.5e6), "12.5 Mb/s"}, {Rate(999), "999 b/s"},
		{Bytes(0), "0"}, {Bytes(4096), "4 KiB"}, {Bytes(12 << 20), "12 MiB"}, {Bytes(2.74e6), "2.74 MB"}, {Bytes(9000), "9 KB"}, {Seconds(3.4e-3), "3.4ms"}, {Seconds(2e-6), "2µs"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestComputeBehind: a node whose loop says it is behind (emu_behind 1)
// is named in the report, once; one on time (0) is not.
func TestComputeBehind(t *testing.T) {
	snap := func(node string, v float64) Snapshot {
		return Snapshot{Node: node, Samples: []telemetry.Sample{{Name: "emu_behind", Labels: []telemetry.Label{{Name: "node", Value: node}}, Value: v}}}
	}
	r := ComputeAll(nil, []Snapshot{snap("rtsw1", 1), snap("host1", 0), snap("ctsw2", 1)})
	if len(r.Behind) != 2 || r.Behind[0] != "rtsw1" || r.Behind[1] != "ctsw2" {
		t.Errorf("behind %v, want [rtsw1 ctsw2]", r.Behind)
	}
}
