package node_test

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/lab/emulation/jobs"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/switchmodel"
)

// testScale is the scale k of the in-process tests: 100G links run at
// 0.5 Gb/s of wall-clock rate.
const testScale = 200

func hostMAC(h, i int) string  { return fmt.Sprintf("02:e0:00:00:%02x:%02x", h, i) }
func swMAC(i int) string       { return fmt.Sprintf("02:5e:00:00:00:%02x", i) }
func hostIP(h, i int) string   { return fmt.Sprintf("10.1.%d.%d", h, i+1) }
func nicName(h, i int) string  { return fmt.Sprintf("h%d:gpu%d", h, i) }
func portName(h, i int) string { return fmt.Sprintf("h%d-gpu%d", h, i) }

// endpointConfig is host h's endpoint node with nics NICs, NIC i cabled
// to peer MAC peers[i], 100G, 1 µs.
func endpointConfig(dir string, h int, peers []string) node.Config {
	c := node.Config{Kind: nodeapi.KindEndpoint, Name: fmt.Sprintf("h%d", h), Scale: testScale, Seed: 3,
		Socket: filepath.Join(dir, fmt.Sprintf("h%d.sock", h))}
	for i, peer := range peers {
		c.Ports = append(c.Ports, node.PortConfig{IfName: portName(h, i), MAC: hostMAC(h, i), PeerMAC: peer, Rate: 100 * clock.Gbps, Delay: clock.Microsecond})
		c.NICs = append(c.NICs, node.NICConfig{Name: nicName(h, i), IP: hostIP(h, i), MTU: 4096})
	}
	return c
}

// startNode builds and runs a node over ports and returns its client.
func startNode(t *testing.T, cfg node.Config, w *emu.MemWaiter, ports []*emu.MemPort) *nodeapi.Client {
	t.Helper()
	var ios []emu.PortIO
	for _, p := range ports {
		ios = append(ios, p)
	}
	n, err := node.New(cfg, node.IO{Ports: ios, Waiter: w}, nil)
	if err != nil {
		t.Fatal(err)
	}
	runNode(t, n)
	c := nodeapi.NewClient(cfg.Socket)
	t.Cleanup(c.Close)
	waitHealthy(t, c)
	return c
}

// backToBack runs two one-NIC endpoint nodes cabled to each other.
func backToBack(t *testing.T) (a, b *nodeapi.Client) {
	dir := t.TempDir()
	wa, wb := emu.NewMemWaiter(), emu.NewMemWaiter()
	pa, pb := wa.NewPort(), wb.NewPort()
	emu.Join(pa, pb)
	a = startNode(t, endpointConfig(dir, 1, []string{hostMAC(2, 0)}), wa, []*emu.MemPort{pa})
	b = startNode(t, endpointConfig(dir, 2, []string{hostMAC(1, 0)}), wb, []*emu.MemPort{pb})
	return a, b
}

// TestEndpointPerf runs perftest-like jobs between two endpoint nodes
// through their APIs: data checked, results in real units (fabric time).
func TestEndpointPerf(t *testing.T) {
	a, b := backToBack(t)
	ctx := t.Context()
	from := jobs.NICRef{Node: "h1", NIC: "gpu0", Client: a}
	to := jobs.NICRef{Node: "h2", NIC: "h2:gpu0", Client: b}
	for _, tc := range []struct {
		name string
		spec jobs.PerfSpec
	}{
		{"write_bw", jobs.PerfSpec{Op: "write", Size: 65536, Iterations: 150, QPs: 2, Seed: 9}},
		{"read_bw", jobs.PerfSpec{Op: "read", Size: 32768, Iterations: 100, Seed: 10}},
		{"send_bw_metaroce", jobs.PerfSpec{Op: "send", Size: 8192, Iterations: 200, Mode: endpoint.ModeMetaRoCE, Seed: 11}},
		{"write_lat", jobs.PerfSpec{Op: "write", Latency: true, Size: 64, Iterations: 30, Seed: 12}},
		{"read_lat", jobs.PerfSpec{Op: "read", Latency: true, Size: 64, Iterations: 30, Seed: 13}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := jobs.RunPerf(ctx, from, to, tc.spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			r := rep.Client
			t.Logf("%s: %d msgs %d B in %v: avg %.2f peak %.2f Gb/s, lat %+v, mode %s, checked %v wrong %d",
				tc.name, r.Messages, r.Bytes, r.Duration, r.BWAvg, r.BWPeak, r.Lat, rep.Mode, rep.Checked, rep.WrongBytes)
			qps := max(tc.spec.QPs, 1)
			if r.Messages != int64(tc.spec.Iterations*qps) || r.Progress != 1 {
				t.Errorf("client completed %d messages (progress %v), want %d", r.Messages, r.Progress, tc.spec.Iterations*qps)
			}
			if !rep.Checked || rep.WrongBytes != 0 {
				t.Errorf("data check: checked %v, %d wrong bytes", rep.Checked, rep.WrongBytes)
			}
			if tc.spec.Op != "read" && rep.Server.Bytes < int64(tc.spec.Iterations*qps*tc.spec.Size) {
				t.Errorf("server received %d data bytes, want >= %d", rep.Server.Bytes, tc.spec.Iterations*qps*tc.spec.Size)
			}
			if want := tc.spec.Mode; rep.Mode != want {
				t.Errorf("mode in force %q, want %q", rep.Mode, want)
			}
			if !tc.spec.Latency {
				// Real units: at most the 100G line rate, and far above the
				// dilated wall-clock rate (100G / 200 = 0.5 Gb/s). The peak
				// is measured over completions stamped per loop turn (see
				// PerfResult), so only its floor is checked.
				if r.BWAvg <= 5 || r.BWAvg > 100.01 || r.BWPeak < r.BWAvg {
					t.Errorf("BW avg %.3f peak %.3f Gb/s, want avg within (5, 100] and peak >= avg", r.BWAvg, r.BWPeak)
				}
				return
			}
			// One way over a 1 µs cable: at least the propagation delay and
			// a 64-byte frame's serialization, in fabric time.
			low := clock.Microsecond
			if tc.spec.Op == "read" {
				low = 2 * clock.Microsecond
			}
			if r.Lat == nil || r.Lat.Min < low || r.Lat.Typical < r.Lat.Min || r.Lat.Max < r.Lat.P99 || r.Lat.P99 < r.Lat.Typical {
				t.Errorf("latencies %+v, want min >= %v and ordered", r.Lat, low)
			}
		})
	}
	for _, c := range []*nodeapi.Client{a, b} {
		s, err := c.Telemetry(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if bad := telemetry.Sum(s, "nic_rx_bad_icrc_total"); bad != 0 {
			t.Errorf("%v frames with a bad ICRC", bad)
		}
		if rx := telemetry.Sum(s, "nic_rx_packets_total"); rx == 0 {
			t.Error("no NIC counters in the telemetry")
		}
		if jobs := telemetry.Sum(s, "job_running", telemetry.Label{Name: "kind", Value: "perf"}); jobs != 0 {
			t.Errorf("%v perf jobs still running", jobs)
		}
	}
}

// heapMB is the live heap after a GC, in MiB.
func heapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// TestFinishedJobsHoldNoMemory: a node keeps its last finished jobs for
// their results, but not their QPs and buffers. The soak (`make soak`)
// found each all-reduce leaving its receive memory behind (and each perf
// its message buffers): here 8 perfs of 4 MiB messages and 6 all-reduces
// of 1 MiB, both nodes in this process, would keep 64 + 24 MiB.
func TestFinishedJobsHoldNoMemory(t *testing.T) {
	dir := t.TempDir()
	wa, wb := emu.NewMemWaiter(), emu.NewMemWaiter()
	pa, pb := wa.NewPort(), wb.NewPort()
	emu.Join(pa, pb)
	a := startNode(t, endpointConfig(dir, 1, []string{hostMAC(2, 0)}), wa, []*emu.MemPort{pa})
	b := startNode(t, endpointConfig(dir, 2, []string{hostMAC(1, 0)}), wb, []*emu.MemPort{pb})
	// The memory ports keep every frame written until asked for them.
	heapMB := func() float64 {
		pa.Written()
		pb.Written()
		return heapMB()
	}
	from := jobs.NICRef{Node: "h1", NIC: "gpu0", Client: a}
	to := jobs.NICRef{Node: "h2", NIC: "gpu0", Client: b}
	spec := jobs.PerfSpec{Op: "write", Size: 4 << 20, Iterations: 2, Seed: 1}
	perf := func() {
		t.Helper()
		if rep, err := jobs.RunPerf(t.Context(), from, to, spec, nil); err != nil || !rep.Checked || rep.WrongBytes != 0 {
			t.Fatalf("perf: %+v, %v", rep, err)
		}
	}
	coll := func() {
		t.Helper()
		res, err := jobs.RunCollective(t.Context(), jobs.CollectiveSpec{Op: "all_reduce", Ranks: []jobs.NICRef{from, to},
			Sizes: []int64{1 << 20}, Iters: 1, Check: true, Seed: 2, ReleaseDelay: time.Millisecond}, nil)
		if err != nil || len(res) != 1 || !res[0].Checked || res[0].Wrong != 0 {
			t.Fatalf("all-reduce: %+v, %v", res, err)
		}
	}
	perf()
	coll()
	before := heapMB()
	for range 8 {
		perf()
		pa.Written()
		pb.Written()
	}
	for range 6 {
		coll()
		pa.Written()
		pb.Written()
	}
	after := heapMB()
	t.Logf("live heap %.1f MiB before, %.1f MiB after", before, after)
	if after-before > 16 {
		t.Errorf("the live heap grew by %.1f MiB over 14 finished jobs: they hold their memory", after-before)
	}
	// The finished jobs still report what they did.
	s, err := b.Telemetry(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if it := telemetry.Sum(s, "collective_iterations_total"); it < 7 {
		t.Errorf("collective_iterations_total = %v after 7 all-reduces, want their counts kept", it)
	}
}

// TestEndpointAPIErrors checks the endpoint routes' refusals.
func TestEndpointAPIErrors(t *testing.T) {
	a, b := backToBack(t)
	ctx := t.Context()
	if _, err := a.CreateQP(ctx, nodeapi.QPRequest{NIC: "gpu7"}); !isStatus(err, 400) {
		t.Errorf("QP on an unknown NIC: %v, want 400", err)
	}
	if _, err := a.CreateQP(ctx, nodeapi.QPRequest{NIC: "gpu0", CC: "bbr"}); !isStatus(err, 400) {
		t.Errorf("QP with an unknown cc: %v, want 400", err)
	}
	q, err := a.CreateQP(ctx, nodeapi.QPRequest{NIC: "gpu0", Buffer: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if q.State != "RESET" || q.Buffer.Len != 4096 || q.Conn.IP.String() != hostIP(1, 0) {
		t.Errorf("created %+v", q)
	}
	if _, err := a.StartPerf(ctx, nodeapi.PerfRequest{Role: "client", QPs: []int{q.ID}, Size: 1024}); !isStatus(err, 400) || !strings.Contains(err.Error(), "not connected") {
		t.Errorf("perf on an unconnected QP: %v, want 400", err)
	}
	if _, err := a.StartPerf(ctx, nodeapi.PerfRequest{Role: "boss", QPs: []int{q.ID}}); !isStatus(err, 400) {
		t.Errorf("perf with a bad role: %v, want 400", err)
	}
	if _, err := a.ConnectQP(ctx, 999, nodeapi.ConnectRequest{Remote: q.Conn}); !isStatus(err, 404) {
		t.Errorf("connect an unknown QP: %v, want 404", err)
	}
	if _, err := a.Job(ctx, 999, -1, 0); !isStatus(err, 404) {
		t.Errorf("unknown job: %v, want 404", err)
	}
	if err := a.DeleteQP(ctx, q.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.QP(ctx, q.ID); !isStatus(err, 404) {
		t.Errorf("deleted QP: %v, want 404", err)
	}
	nics, err := b.NICs(ctx)
	if err != nil || len(nics) != 1 || nics[0].Name != "h2:gpu0" || nics[0].MAC != hostMAC(2, 0) {
		t.Errorf("NICs = %+v, %v", nics, err)
	}
	h, err := b.Health(ctx)
	if err != nil || h.Kind != nodeapi.KindEndpoint {
		t.Errorf("Health = %+v, %v", h, err)
	}
}

// TestEndpointCollective runs collectives across two endpoint processes
// of two ranks each, through an in-process switch node, and compares the
// combined results' shape with the nccl-tests rules.
func TestEndpointCollective(t *testing.T) {
	dir := t.TempDir()
	ws := emu.NewMemWaiter()
	sc := switchmodel.DefaultConfig()
	scfg := node.Config{Kind: nodeapi.KindSwitch, Name: "sw", Scale: testScale, Seed: 3, Socket: filepath.Join(dir, "sw.sock"), Switch: &sc}
	var swPorts, hostPorts [3][]*emu.MemPort
	hw := [3]*emu.MemWaiter{nil, emu.NewMemWaiter(), emu.NewMemWaiter()}
	var peers [3][]string
	for h := 1; h <= 2; h++ {
		for i := range 2 {
			sp := len(scfg.Ports)
			scfg.Ports = append(scfg.Ports, node.PortConfig{IfName: fmt.Sprintf("sw-p%d", sp), MAC: swMAC(sp), PeerMAC: hostMAC(h, i), Rate: 100 * clock.Gbps, Delay: clock.Microsecond})
			scfg.Routes = append(scfg.Routes, switchmodel.Route{Prefix: netip.PrefixFrom(netip.MustParseAddr(hostIP(h, i)), 32), Ports: []int{sp}})
			a, b := ws.NewPort(), hw[h].NewPort()
			emu.Join(a, b)
			swPorts[0] = append(swPorts[0], a)
			hostPorts[h] = append(hostPorts[h], b)
			peers[h] = append(peers[h], swMAC(sp))
		}
	}
	startNode(t, scfg, ws, swPorts[0])
	var refs []jobs.NICRef
	for h := 1; h <= 2; h++ {
		c := startNode(t, endpointConfig(dir, h, peers[h]), hw[h], hostPorts[h])
		for i := range 2 {
			refs = append(refs, jobs.NICRef{Node: fmt.Sprintf("h%d", h), NIC: nicName(h, i), Client: c})
		}
	}
	// Interleave the ranks so that every ring neighbour is remote.
	ranks := []jobs.NICRef{refs[0], refs[2], refs[1], refs[3]}
	sizes := []int64{4096, 65536, 262144}
	for _, op := range []string{"all_reduce", "alltoall"} {
		t.Run(op, func(t *testing.T) {
			var seen []int64
			res, err := jobs.RunCollective(t.Context(), jobs.CollectiveSpec{Op: op, Ranks: ranks, Sizes: sizes, Warmup: 1, Iters: 2,
				Check: true, Seed: 5, SliceBytes: 32768, ReleaseDelay: 5 * time.Millisecond},
				func(r collective.Result) { seen = append(seen, r.Size) })
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != len(sizes) || len(seen) != len(sizes) {
				t.Fatalf("%d results, %d progress calls, want %d", len(res), len(seen), len(sizes))
			}
			for i, r := range res {
				t.Logf("%+v", r)
				if r.Size != sizes[i] || r.Ranks != 4 || !r.Checked || r.Wrong != 0 || r.TimeUs <= 0 {
					t.Errorf("size %d: %+v", sizes[i], r)
				}
				// Real units: busbw at most the 100G line rate (12.5 GB/s).
				if r.BusBW <= 0 || r.BusBW > 12.5 {
					t.Errorf("size %d: busbw %.3f GB/s outside (0, 12.5]", sizes[i], r.BusBW)
				}
			}
		})
	}
}

// TestQPLimit: a NIC keeps at most nodeapi.MaxQPsPerNIC QPs; the next is
// refused (409) saying so, and a deleted QP
// makes room again.
func TestQPLimit(t *testing.T) {
	a, _ := backToBack(t)
	ctx := t.Context()
	var last int
	for i := range nodeapi.MaxQPsPerNIC {
		q, err := a.CreateQP(ctx, nodeapi.QPRequest{NIC: "gpu0"})
		if err != nil {
			t.Fatalf("QP %d: %v", i+1, err)
		}
		last = q.ID
	}
	_, err := a.CreateQP(ctx, nodeapi.QPRequest{NIC: "gpu0"})
	if !isStatus(err, 409) || !strings.Contains(err.Error(), "its limit") {
		t.Fatalf("QP %d: %v, want 409 naming the limit", nodeapi.MaxQPsPerNIC+1, err)
	}
	if err := a.DeleteQP(ctx, last); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateQP(ctx, nodeapi.QPRequest{NIC: "gpu0"}); err != nil {
		t.Errorf("QP after deleting one: %v", err)
	}
}

// TestInterruptedPerfLeavesNoQPs: a perf of thousands of QPs stopped while
// it creates them, or while it runs, leaves no QP on either node (issue
// 24: 7,510-11,240 QPs stayed behind): the run deletes its QPs by owner
// in one call per node, which also catches a create that was in flight.
func TestInterruptedPerfLeavesNoQPs(t *testing.T) {
	a, b := backToBack(t)
	from := jobs.NICRef{Node: "h1", NIC: "gpu0", Client: a}
	to := jobs.NICRef{Node: "h2", NIC: "h2:gpu0", Client: b}
	qps := func(c *nodeapi.Client) int { return nicQPs(t, c) }
	for _, tc := range []struct {
		name  string
		after time.Duration
		spec  jobs.PerfSpec
	}{
		{"while creating", 300 * time.Millisecond, jobs.PerfSpec{Op: "write", Size: 4096, Iterations: 10, QPs: nodeapi.MaxQPsPerNIC}},
		{"while running", 1500 * time.Millisecond, jobs.PerfSpec{Op: "write", Size: 4096, Iterations: 1 << 20, QPs: 64}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), tc.after)
			defer cancel()
			_, err := jobs.RunPerf(ctx, from, to, tc.spec, nil)
			if err == nil {
				t.Fatal("perf finished before it was stopped: make it longer")
			}
			stopped := time.Now()
			for qps(a)+qps(b) > 0 && time.Since(stopped) < 2*time.Second {
				time.Sleep(20 * time.Millisecond)
			}
			if na, nb := qps(a), qps(b); na+nb > 0 {
				t.Errorf("%d and %d QPs left 2 s after the stop (%v)", na, nb, err)
			}
		})
	}
}
