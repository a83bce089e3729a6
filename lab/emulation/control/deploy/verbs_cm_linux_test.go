package deploy_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/datapath/verbs"
)

// Programs that connect through rdma_cm (rocelab's librdmacm), host1 →
// host4 across both tiers of the laptop lab (issue 50's must-shows).

// notListeningCM is what rdma_cm programs say when their server does not
// listen yet: a REJ (no listener on the port), or for qperf and fi_pingpong
// a refused control connection.
var notListeningCM = []string{"RDMA_CM_EVENT_REJECTED", "Failed to connect RDMA CM events", "Unable to perform rdma_client",
	"failed to connect", "Connection refused", "UNREACHABLE"}

// cmPair runs an rdma_cm program's server on host4 and its client on
// host1 (again while the server does not listen yet); both must exit 0.
func (v *verbsLab) cmPair(srvArgv, cliArgv []string) (srv, cli string) {
	v.t.Helper()
	srvCode, srv, cliCode, cli := v.cmRun(srvArgv, cliArgv)
	if cliCode != 0 || srvCode != 0 {
		v.t.Fatalf("%v → %v: client exit %d, server exit %d\nclient:\n%s\nserver:\n%s", cliArgv, srvArgv, cliCode, srvCode, cli, srv)
	}
	return srv, cli
}

// cmRun runs a server on host4 and its client on host1 (retried while the
// server is not listening yet) and returns both exit codes and outputs.
func (v *verbsLab) cmRun(srvArgv, cliArgv []string) (srvCode int, srv string, cliCode int, cli string) {
	v.t.Helper()
	type result struct {
		code int
		out  string
	}
	done := make(chan result, 1)
	go func() {
		code, out := v.exec(context.Background(), 150*time.Second, "host4", srvArgv...)
		done <- result{code, out}
	}()
	cliCode, cli = v.clientUntil(120*time.Second, "host1", notListeningCM, cliArgv...)
	s := <-done
	return s.code, s.out, cliCode, cli
}

// be is node's gpu0 back-end address.
func (v *verbsLab) be(node string) string {
	v.t.Helper()
	_, n, err := deploy.FindNode(v.root, v.lab, node)
	if err != nil {
		v.t.Fatal(err)
	}
	devs, err := verbs.Devices(verbs.SocketPath(n.Socket))
	if err != nil || len(devs) == 0 {
		v.t.Fatalf("devices of %s: %v", node, err)
	}
	return devs[0].IPv4.String()
}

// runCM runs the rdma_cm programs as subtests of t.
func (v *verbsLab) runCM(t *testing.T) {
	for _, tool := range []string{"rping", "udaddy", "qperf", "fi_info", "fi_pingpong"} {
		testenv.RequireTool(t, tool)
	}
	testenv.RequireCMLib(t, filepath.Join(filepath.Dir(binary(t)), "lib", verbs.LibName))
	for _, c := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"rping", v.rping}, {"cm_selftest", v.cmSelftest}, {"udaddy", v.udaddy}, {"perftest_R", v.perftestR}, {"qperf_cm", v.qperfCM},
		{"refused", v.refused}, {"cm_through_loss", v.cmThroughLoss}, {"fi_info", v.fiInfo}, {"fi_pingpong", v.fiPingpong},
	} {
		t.Run(c.name, func(t *testing.T) {
			v.t = t
			c.run(t)
		})
	}
}

// rping: 100 pings with their data verified on both sides, while host1's
// gpu0 port is captured: the pcap holds the CM handshake, which tshark
// decodes without complaint.
func (v *verbsLab) rping(t *testing.T) {
	pcap := filepath.Join(t.TempDir(), "cm.pcap")
	capDone := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, err := deploy.Capture(ctx, v.root, v.lab, "host1:gpu0", deploy.CaptureOptions{File: pcap})
		capDone <- err
	}()
	time.Sleep(500 * time.Millisecond)
	srv, cli := v.cmPair([]string{"rping", "-s", "-v", "-V", "-C", "100"}, []string{"rping", "-c", "-v", "-V", "-C", "100", "-a", v.be("host4")})
	time.Sleep(time.Second) // the last DREP may still be on its way to host1
	cancel()
	if err := <-capDone; err != nil && ctx.Err() == nil {
		t.Fatalf("capture: %v", err)
	}
	for name, out := range map[string]string{"server": srv, "client": cli} {
		if n := strings.Count(out, "ping data: rdma-ping-"); n != 100 {
			t.Errorf("rping %s printed %d verified pings, want 100:\n%s", name, n, out)
		}
	}
	if !strings.Contains(cli, "ping data: rdma-ping-99: ") {
		t.Errorf("rping client did not reach ping 99:\n%s", cli)
	}
	fields := []string{"infiniband.mad.attributeid", "infiniband.cm.req.ip_cm.dip4", "_ws.malformed", "_ws.expert.severity"}
	rows := testenv.TsharkFields(t, pcap, fields)
	var attrs []string
	for _, r := range rows {
		if r[2] != "" || r[3] != "" {
			t.Errorf("tshark: a frame malformed %q, expert severity %q", r[2], r[3])
		}
		if r[0] != "" {
			attrs = append(attrs, r[0])
		}
		if r[1] != "" && r[1] != v.be("host4") {
			t.Errorf("the REQ's IP CM header names %s, want host4's %s", r[1], v.be("host4"))
		}
	}
	// REQ 0x0010, MRA 0x0011 (host4 asks for time while rping
	// accepts), REP 0x0013, RTU 0x0014, DREQ 0x0015, DREP 0x0016.
	for _, want := range []string{"0x0010", "0x0013", "0x0014", "0x0015", "0x0016"} {
		if !slices.Contains(attrs, want) {
			t.Errorf("the capture of host1:gpu0 lacks CM attribute %s (has %q)", want, attrs)
		}
	}
	t.Logf("host1:gpu0 carried CM MADs %q", attrs)
}

// cmSelftest runs librdmacm/testdata/cmtest.c between host4 and host1: what
// the Debian programs leave out (a non-blocking channel, private data both
// ways, a REJ's reason and data, ports, the synchronous API, UD through
// SIDR with private data, buffers on the stack).
func (v *verbsLab) cmSelftest(t *testing.T) {
	cc := testenv.RequireTool(t, "cc")
	bin := filepath.Join(t.TempDir(), "cmtest")
	libDir := filepath.Join(filepath.Dir(binary(t)), "lib")
	src, _ := filepath.Abs("../../datapath/verbs/librdmacm/testdata/cmtest.c")
	if out, err := exec.Command(cc, "-g", "-rdynamic", "-Wall", "-o", bin, src, "-L", libDir, "-l:"+verbs.CMLibName, "-l:"+verbs.LibName).CombinedOutput(); err != nil {
		t.Fatalf("compile cmtest: %v\n%s", err, out)
	}
	// A known defect (not found yet, docs/verbs.md): about one server in
	// ten on a loaded machine loses the top of its stack (zeroed pages) and
	// crashes: the crash handler says so (exit 3), or, when the stack
	// cannot take the handler's frame, the signal kills it (exit -1). It
	// is run once more then, and fails if it fails again.
	for try, port := range []string{"7471", "7481"} {
		srvCode, srv, cliCode, cli := v.cmRun([]string{bin, "server", port}, []string{bin, "client", "host4", port})
		if try == 0 && (srvCode == 3 && strings.Contains(srv, "cmtest: signal") || srvCode == -1) {
			t.Logf("cmtest server crashed (exit %d; the known stack defect), running once more:\n%s\nclient:\n%s", srvCode, srv, cli)
			continue
		}
		if cliCode != 0 || srvCode != 0 || !strings.Contains(cli, "cmtest: ok") || !strings.Contains(srv, "cmtest: served") {
			t.Fatalf("cmtest: client exit %d, server exit %d\nclient:\n%s\nserver:\n%s", cliCode, srvCode, cli, srv)
		}
		return
	}
}

// udaddy: a UD service resolved through SIDR, datagrams both ways.
func (v *verbsLab) udaddy(t *testing.T) {
	srv, cli := v.cmPair([]string{"udaddy"}, []string{"udaddy", "-s", v.be("host4")})
	for name, out := range map[string]string{"server": srv, "client": cli} {
		if !strings.Contains(out, "data transfers complete") || !strings.Contains(out, "return status 0") {
			t.Errorf("udaddy %s:\n%s", name, out)
		}
	}
}

// perftestR: perftest with -R, its connections and its data exchange both
// through rdma_cm.
func (v *verbsLab) perftestR(t *testing.T) {
	for _, prog := range []string{"ib_write_bw", "ib_send_lat", "ib_read_bw"} {
		args := []string{prog, "-R", "-n", "100"}
		_, cli := v.cmPair(args, append(slices.Clone(args), v.be("host4")))
		if !strings.Contains(cli, "Data ex. method : rdma_cm") || !regexp.MustCompile(`(?m)^\s+\d+\s+100\s+\d`).MatchString(cli) {
			t.Errorf("%s -R: no result line for 100 iterations over rdma_cm:\n%s", prog, cli)
		}
	}
}

// qperfCM: qperf's RC tests with rdma_cm; its client names host4 by name
// (rocelab exec's /etc/hosts gives its front-end address, qperf's control
// connection's), which rdma_cm resolves to host4's NIC. A qperf server
// serves until it is stopped.
func (v *verbsLab) qperfCM(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srvDone := make(chan struct{})
	go func() {
		defer close(srvDone)
		var out lockedWriter
		out.w = new(bytes.Buffer)
		deploy.Exec(ctx, v.root, v.lab, "host4", []string{"qperf", "-lp", "19766"}, sandbox.Stdio{Out: &out, Err: &out})
	}()
	defer func() {
		cancel()
		<-srvDone
	}()
	code, cli := v.clientUntil(120*time.Second, "host1", notListeningCM,
		"qperf", "-lp", "19766", "-cm1", "-t", "2", "host4", "rc_bw", "rc_lat", "rc_rdma_write_bw")
	if code != 0 {
		t.Fatalf("qperf -cm1: exit %d\n%s", code, cli)
	}
	for _, want := range []*regexp.Regexp{regexp.MustCompile(`rc_bw:\s+bw\s+=\s+[\d.]+ [KMG]B/sec`),
		regexp.MustCompile(`rc_lat:\s+latency\s+=\s+[\d.]+ (us|ms)`), regexp.MustCompile(`rc_rdma_write_bw:\s+bw\s+=\s+[\d.]+ [KMG]B/sec`)} {
		if !want.MatchString(cli) {
			t.Errorf("qperf -cm1: no %s:\n%s", want, cli)
		}
	}
}

// refused: a connection to a port nobody listens on is refused (a REJ,
// reason 8) within a second of fabric time.
func (v *verbsLab) refused(t *testing.T) {
	start := time.Now()
	code, out := v.exec(context.Background(), 60*time.Second, "host1", "rping", "-c", "-C", "1", "-p", "7999", "-a", v.be("host4"))
	took := time.Since(start)
	if code == 0 || !strings.Contains(out, "RDMA_CM_EVENT_REJECTED, error 8") {
		t.Fatalf("rping to a port nobody listens on: exit %d\n%s", code, out)
	}
	// The whole program's life, in fabric time, bounds the refusal.
	fabric := took / time.Duration(v.scale())
	if fabric > time.Second {
		t.Errorf("refused after %v of fabric time (%v of wall clock), want within a second", fabric, took)
	}
	t.Logf("refused within %v of fabric time (%v of wall clock at k = %d)", fabric, took, v.scale())
}

// cmThroughLoss: the CM's MADs are frames like any other: with a fault on
// host1's gpu0 port dropping everything, rping's REQs are lost (the fault
// counts them); once the fault is off, the CM sends the REQ again after its
// timeout and the connection is made. The capture of the port, taken
// behind the fault, shows the REQ that got through.
func (v *verbsLab) cmThroughLoss(t *testing.T) {
	at := []string{"--root", v.root, "--name", v.lab}
	srvDone := make(chan string, 1)
	go func() {
		code, out := v.exec(context.Background(), 120*time.Second, "host4", "rping", "-s", "-C", "3")
		srvDone <- fmt.Sprintf("exit %d\n%s", code, out)
	}()
	time.Sleep(2 * time.Second) // the server listens
	if code, out, _ := rocelabWithin(t, 20*time.Second, append([]string{"fault", "add", "host1:gpu0", "loss", "100%"}, at...)...); code != 0 {
		t.Fatalf("fault add: exit %d\n%s", code, out)
	}
	pcap := filepath.Join(t.TempDir(), "lost.pcap")
	ctx, cancel := context.WithCancel(context.Background())
	capDone := make(chan error, 1)
	go func() {
		_, err := deploy.Capture(ctx, v.root, v.lab, "host1:gpu0", deploy.CaptureOptions{File: pcap})
		capDone <- err
	}()
	cliDone := make(chan string, 1)
	var cliCode int
	go func() {
		code, out := v.exec(context.Background(), 120*time.Second, "host1", "rping", "-c", "-C", "3", "-a", v.be("host4"))
		cliCode = code
		cliDone <- out
	}()
	// Two CM timeouts of wall time at the lab's scale: the first REQ
	// and its first retry are lost.
	time.Sleep(2*time.Duration(v.scale())*time.Millisecond + time.Second)
	_, list, _ := rocelabWithin(t, 20*time.Second, append([]string{"fault", "list"}, at...)...)
	dropped := 0
	if m := regexp.MustCompile(`dropped=(\d+)`).FindStringSubmatch(list); m != nil {
		dropped, _ = strconv.Atoi(m[1])
	}
	if code, out, _ := rocelabWithin(t, 20*time.Second, append([]string{"fault", "clear", "--all"}, at...)...); code != 0 {
		t.Fatalf("fault clear: exit %d\n%s", code, out)
	}
	cli := <-cliDone
	srv := <-srvDone
	time.Sleep(time.Second)
	cancel()
	<-capDone
	if cliCode != 0 {
		t.Fatalf("rping through a lost REQ: client exit %d\n%s\nserver: %s", cliCode, cli, srv)
	}
	n := map[string]int{}
	for _, r := range testenv.TsharkFields(t, pcap, []string{"infiniband.mad.attributeid"}) {
		n[r[0]]++
	}
	if dropped < 1 || n["0x0010"] < 1 {
		t.Errorf("the fault dropped %d frames and host1:gpu0 then carried %d REQs; want the lost REQ dropped and one sent again:\n%s", dropped, n["0x0010"], list)
	}
	t.Logf("the fault dropped %d frames (rping's REQs); after it, host1:gpu0 carried %d REQ and the connection was made", dropped, n["0x0010"])
}

// scale is the lab's scale factor k.
func (v *verbsLab) scale() int {
	v.t.Helper()
	l, _, err := deploy.FindNode(v.root, v.lab, "host1")
	if err != nil {
		v.t.Fatal(err)
	}
	return max(l.Scale, 1)
}

// fiInfo: libfabric's verbs provider lists the host's NICs.
func (v *verbsLab) fiInfo(t *testing.T) {
	code, out := v.exec(context.Background(), 60*time.Second, "host1", "fi_info", "-p", "verbs")
	if code != 0 {
		t.Fatalf("fi_info -p verbs: exit %d\n%s", code, out)
	}
	for _, want := range []string{"domain: rocelab_gpu0", "domain: rocelab_gpu1", "domain: rocelab_gpu0-dgram", "type: FI_EP_DGRAM"} {
		if !strings.Contains(out, want) {
			t.Errorf("fi_info -p verbs lacks %q:\n%s", want, out)
		}
	}
}

// fiPingpong: libfabric's ping-pong over the verbs provider (its default
// datagram endpoints), every size to the end.
func (v *verbsLab) fiPingpong(t *testing.T) {
	_, cli := v.cmPair([]string{"fi_pingpong", "-p", "verbs", "-I", "50"}, []string{"fi_pingpong", "-p", "verbs", "-I", "50", v.fe["host4"]})
	if !regexp.MustCompile(`(?m)^4k\s+50\s+=50\s`).MatchString(cli) {
		t.Errorf("fi_pingpong -p verbs did not ping-pong 50 4 KiB messages:\n%s", cli)
	}
}
