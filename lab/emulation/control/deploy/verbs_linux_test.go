package deploy_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/docker/dockertest"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/datapath/verbs"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// verbsLab is a laptop lab whose hosts run Debian's verbs programs
// through rocelab's libibverbs.
type verbsLab struct {
	t         *testing.T
	root, lab string
	fe        map[string]string // host -> its FE address, for the programs' TCP exchange
}

var verbsLibOnce sync.Once

func newVerbsLab(t *testing.T) *verbsLab {
	t.Helper()
	return newVerbsLabWith(t, deploy.Options{})
}

// newVerbsLabWith is newVerbsLab with the lab deployed with o.
func newVerbsLabWith(t *testing.T, o deploy.Options) *verbsLab {
	t.Helper()
	requireRoot(t)
	for _, tool := range []string{"ibv_devinfo", "ibv_rc_pingpong", "ibv_srq_pingpong", "ibv_ud_pingpong", "ib_write_bw", "ib_send_bw", "ib_read_lat"} {
		testenv.RequireTool(t, tool)
	}
	bin := binary(t)
	lib := filepath.Join(filepath.Dir(bin), "lib", verbs.LibName)
	verbsLibOnce.Do(func() { testenv.BuildVerbsLib(t, lib) })
	if _, err := os.Stat(lib); err != nil {
		t.Fatalf("the verbs library was not built: %v", err)
	}
	v := &verbsLab{t: t, root: runRoot(t), lab: labName(t, "verbs"), fe: map[string]string{}}
	l := deployLab(t, "laptop", v.lab, v.root, o)
	for _, n := range l.Nodes {
		if len(n.Addresses) > 0 {
			v.fe[n.Name], _, _ = strings.Cut(n.Addresses[0], "/")
		}
	}
	return v
}

// exec runs argv on node within limit and returns its exit code and
// output; a program still running at the limit fails the test (a hang).
func (v *verbsLab) exec(ctx context.Context, limit time.Duration, node string, argv ...string) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var out bytes.Buffer
	w := &lockedWriter{w: &out}
	code, err := deploy.Exec(ctx, v.root, v.lab, node, argv, sandbox.Stdio{Out: w, Err: w})
	if ctx.Err() == context.DeadlineExceeded {
		v.t.Errorf("%s: %v did not end within %v (a hang)\n%s", node, argv, limit, w.String())
		return -1, w.String()
	}
	if err != nil && ctx.Err() == nil {
		v.t.Fatalf("%s: %v: %v", node, argv, err)
	}
	return code, w.String()
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

// pair runs a verbs program's server on srv and its client on cli (the
// client retries until the server listens) and returns both outputs; each
// must exit 0.
func (v *verbsLab) pair(srv, cli string, argv ...string) (string, string) {
	v.t.Helper()
	type result struct {
		code int
		out  string
	}
	done := make(chan result, 1)
	go func() {
		code, out := v.exec(context.Background(), 120*time.Second, srv, append(argv, "-d", verbs.DeviceName(srv+":gpu0"))...)
		done <- result{code, out}
	}()
	code, out := v.client(120*time.Second, cli, append(argv, "-d", verbs.DeviceName(cli+":gpu0"), v.fe[srv])...)
	s := <-done
	if code != 0 || s.code != 0 {
		v.t.Fatalf("%v between %s and %s: client exit %d, server exit %d\nclient:\n%s\nserver:\n%s", argv, cli, srv, code, s.code, out, s.out)
	}
	return s.out, out
}

// notListening is what a verbs program's client says when its server does
// not listen yet (ibv_rc_pingpong and perftest alike).
const notListening = "Couldn't connect to"

// client runs a verbs program's client on node (its server was started
// beside it), again every 200 ms while the server does not listen yet, up
// to 50 times; it returns the last run's exit code and output.
func (v *verbsLab) client(limit time.Duration, node string, argv ...string) (int, string) {
	return v.clientUntil(limit, node, []string{notListening}, argv...)
}

// clientUntil is client with notYet the outputs that say the server does
// not listen yet.
func (v *verbsLab) clientUntil(limit time.Duration, node string, notYet []string, argv ...string) (int, string) {
	v.t.Helper()
	code, out := -1, "never connected"
	for try := 0; try < 50; try++ {
		time.Sleep(200 * time.Millisecond)
		code, out = v.exec(context.Background(), limit, node, argv...)
		if code == 0 || !slices.ContainsFunc(notYet, func(s string) bool { return strings.Contains(out, s) }) {
			break
		}
	}
	return code, out
}

// counters sums the counter name over the samples of node whose labels
// include want.
func (v *verbsLab) counter(node, name string, want map[string]string) float64 {
	v.t.Helper()
	_, n, err := deploy.FindNode(v.root, v.lab, node)
	if err != nil {
		v.t.Fatal(err)
	}
	ss, err := nodeapi.NewClient(n.Socket).Telemetry(context.Background())
	if err != nil {
		v.t.Fatalf("telemetry of %s: %v", node, err)
	}
	sum := 0.0
	for _, s := range ss {
		if s.Name == name && matches(s, want) {
			sum += s.Value
		}
	}
	return sum
}

func matches(s telemetry.Sample, want map[string]string) bool {
	for k, v := range want {
		if s.Label(k) != v {
			return false
		}
	}
	return true
}

// liveQPs counts the QP rows of nic that are not the retired sum.
func (v *verbsLab) liveQPs(node, nic string) int {
	v.t.Helper()
	_, n, err := deploy.FindNode(v.root, v.lab, node)
	if err != nil {
		v.t.Fatal(err)
	}
	ss, err := nodeapi.NewClient(n.Socket).Telemetry(context.Background())
	if err != nil {
		v.t.Fatalf("telemetry of %s: %v", node, err)
	}
	live := 0
	for _, s := range ss {
		if s.Name == "qp_tx_bytes_total" && s.Label("node") == nic && s.Label("qp") != "retired" {
			live++
		}
	}
	return live
}

// mappings counts the program memory (memfds of rocelab's libibverbs)
// that node's process maps.
func (v *verbsLab) mappings(node string) int {
	v.t.Helper()
	_, n, err := deploy.FindNode(v.root, v.lab, node)
	if err != nil {
		v.t.Fatal(err)
	}
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", n.PID))
	if err != nil {
		v.t.Fatal(err)
	}
	return strings.Count(string(maps), "memfd:rocelab-")
}

// TestVerbsPrograms runs Debian's unmodified verbs programs on the laptop
// lab through rocelab's libibverbs (issue 23's must-shows).
func TestVerbsPrograms(t *testing.T) {
	v := newVerbsLab(t)

	t.Run("devinfo", func(t *testing.T) {
		v.t = t
		code, out := v.exec(context.Background(), 30*time.Second, "host1", "ibv_devinfo", "-v")
		if code != 0 {
			t.Fatalf("ibv_devinfo: exit %d\n%s", code, out)
		}
		for _, want := range []string{"hca_id:\trocelab_gpu0", "hca_id:\trocelab_gpu1", "PORT_ACTIVE (4)",
			"link_layer:\t\tEthernet", "active_mtu:\t\t4096 (5)", "active_width:\t\t4X (2)", "RoCE v2"} {
			if !strings.Contains(out, want) {
				t.Errorf("ibv_devinfo -v lacks %q:\n%s", want, out)
			}
		}
		// GID 3 is the RoCE v2 GID of the NIC's BE address.
		if !regexp.MustCompile(`GID\[  3\]:\s+::ffff:198\.18\.\d+\.\d+, RoCE v2`).MatchString(out) {
			t.Errorf("ibv_devinfo -v: no RoCE v2 GID of an IPv4 BE address at index 3:\n%s", out)
		}
	})

	t.Run("rc_pingpong", func(t *testing.T) {
		v.t = t
		srv, cli := v.pair("host4", "host1", "ibv_rc_pingpong", "-g", "3", "-c", "-n", "50")
		for _, out := range []string{srv, cli} {
			if !strings.Contains(out, "50 iters in") {
				t.Errorf("ibv_rc_pingpong -c did not report its iterations:\n%s", out)
			}
		}
	})

	// What goes beyond RC verbs: SRQs, UD, the host's device files,
	// pyverbs, UCX (verbs_stacks_linux_test.go).
	v.runStacks(t)

	// Programs that connect through rdma_cm: rping, udaddy, perftest -R,
	// qperf, libfabric (verbs_cm_linux_test.go).
	v.runCM(t)

	// The verbs perftest and rc_pingpong leave out: the ibv_qp_ex API,
	// SEND with immediate, inline data, RDMA READ, completion channels,
	// a remote access error, unsupported verbs (testdata/selftest.c).
	t.Run("selftest", func(t *testing.T) {
		v.t = t
		cc := testenv.RequireTool(t, "cc")
		bin := filepath.Join(t.TempDir(), "selftest")
		libDir := filepath.Join(filepath.Dir(binary(t)), "lib")
		src, _ := filepath.Abs("../../datapath/verbs/libibverbs/testdata/selftest.c")
		if out, err := exec.Command(cc, "-Wall", "-o", bin, src, "-L", libDir, "-l:"+verbs.LibName).CombinedOutput(); err != nil {
			t.Fatalf("compile the selftest: %v\n%s", err, out)
		}
		code, out := v.exec(context.Background(), 60*time.Second, "host1", bin)
		if code != 0 || !strings.Contains(out, "selftest: ok") {
			t.Fatalf("selftest on host1's two NICs: exit %d\n%s", code, out)
		}
	})

	// The bytes a program moved cross the switch ports on its path: the
	// rack switch ports of the two NICs.
	type pathCase struct {
		prog string
		args []string
		// bytes the program moves; the port whose tx counter must move by
		// at least that much
		bytes                 float64
		node, port, portLabel string
	}
	var tcs []pathCase
	for _, tc := range []pathCase{
		{"ib_write_bw", []string{"-x", "3", "-n", "100", "-s", "65536"}, 100 * 65536, "rtsw2", "p3", ""},
		{"ib_send_bw", []string{"-x", "3", "-n", "100", "-s", "65536"}, 100 * 65536, "rtsw2", "p3", ""},
		{"ib_read_lat", []string{"-x", "3", "-n", "100", "-s", "4096"}, 100 * 4096, "rtsw1", "p1", ""},
	} {
		// The switch labels its ports by index (p3 is "2").
		tc.portLabel = strings.TrimPrefix(tc.port, "p")
		if i, err := strconv.Atoi(tc.portLabel); err == nil {
			tc.portLabel = strconv.Itoa(i - 1)
		}
		tcs = append(tcs, tc)
	}
	for _, tc := range tcs {
		t.Run(tc.prog, func(t *testing.T) {
			v.t = t
			labels := map[string]string{"port": tc.portLabel}
			before := v.counter(tc.node, "switch_port_tx_bytes_total", labels)
			_, cli := v.pair("host4", "host1", append([]string{tc.prog}, tc.args...)...)
			moved := v.counter(tc.node, "switch_port_tx_bytes_total", labels) - before
			if moved < tc.bytes {
				t.Errorf("%s moved %.0f bytes; %s:%s sent %.0f more bytes, want at least that\n%s", tc.prog, tc.bytes, tc.node, tc.port, moved, cli)
			}
			t.Logf("%s: %s:%s sent %.0f bytes for the program's %.0f", tc.prog, tc.node, tc.port, moved, tc.bytes)
			if v.liveQPs("host1", "host1:gpu0") != 0 || v.liveQPs("host4", "host4:gpu0") != 0 {
				t.Errorf("%s left QPs behind in the nodes", tc.prog)
			}
		})
	}

	t.Run("incast_pfc", func(t *testing.T) {
		v.t = t
		pfc := func() float64 { return v.counter("rtsw2", "switch_port_pfc_tx_frames_total", nil) }
		before := pfc()
		// perftest times its runs with the CPU's cycle counter, which it
		// calibrates against the wall clock first; on a loaded VM that
		// calibration can fail ("Correlation coefficient r^2: 0.61 < 0.9",
		// then "Can't produce a report" after the transfer), which says
		// nothing of the lab. Such a round is run once more.
		for round := 1; ; round++ {
			errs := v.incast()
			if round < 2 && len(errs) > 0 && slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, perftestClock) }) {
				t.Logf("round %d: perftest could not calibrate its clock; once more:\n%s", round, strings.Join(errs, "\n"))
				continue
			}
			for _, e := range errs {
				t.Error(e)
			}
			break
		}
		if got := pfc() - before; got <= 0 {
			t.Errorf("three ib_write_bw into host4:gpu0: rtsw2 sent %v PFC frames, want some", got)
		} else {
			t.Logf("three ib_write_bw into host4:gpu0: rtsw2 sent %.0f PFC frames", got)
		}
	})

	t.Run("loss", func(t *testing.T) {
		v.t = t
		at := []string{"--root", v.root, "--name", v.lab}
		if code, out, _ := rocelabWithin(t, 20*time.Second, append([]string{"fault", "add", "host1:gpu0", "loss", "1%"}, at...)...); code != 0 {
			t.Fatalf("fault add: exit %d\n%s", code, out)
		}
		retx := func() float64 {
			return v.counter("host1", "qp_retransmits_total", map[string]string{"node": "host1:gpu0"})
		}
		before := retx()
		v.pair("host4", "host1", "ib_write_bw", "-x", "3", "-n", "200", "-s", "65536")
		if got := retx() - before; got <= 0 {
			t.Errorf("ib_write_bw through 1%% loss: %v retransmissions in host1:gpu0's QP counters, want some", got)
		} else {
			t.Logf("ib_write_bw through 1%% loss: %.0f retransmitted packets", got)
		}
		if code, out, _ := rocelabWithin(t, 20*time.Second, append([]string{"fault", "clear", "--all"}, at...)...); code != 0 {
			t.Fatalf("fault clear: exit %d\n%s", code, out)
		}
	})

	t.Run("killed_program_leaves_nothing", func(t *testing.T) {
		v.t = t
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			// ibv_rc_pingpong's server makes its QP, then waits for a peer.
			v.exec(ctx, 60*time.Second, "host2", "ibv_rc_pingpong", "-g", "3", "-d", verbs.DeviceName("host2:gpu0"))
		}()
		deadline := time.Now().Add(20 * time.Second)
		for v.liveQPs("host2", "host2:gpu0") == 0 {
			if time.Now().After(deadline) {
				t.Fatal("the waiting ibv_rc_pingpong server never showed a QP in host2's telemetry")
			}
			time.Sleep(100 * time.Millisecond)
		}
		if n := v.mappings("host2"); n == 0 {
			t.Errorf("host2's node maps none of the waiting program's memory")
		}
		cancel() // kills the program
		<-done
		for v.liveQPs("host2", "host2:gpu0") != 0 || v.mappings("host2") != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("host2's node still has the killed program's QP or memory (%d mappings)", v.mappings("host2"))
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	// Last: it kills host1's endpoint node.
	t.Run("node_dies", func(t *testing.T) {
		v.t = t
		srvDone := make(chan struct{})
		go func() {
			defer close(srvDone)
			v.exec(context.Background(), 60*time.Second, "host4", "ib_write_bw", "-x", "3", "-n", "100000", "-d", verbs.DeviceName("host4:gpu0"))
		}()
		type result struct {
			code int
			out  string
		}
		cli := make(chan result, 1)
		go func() {
			code, out := v.client(60*time.Second, "host1", "ib_write_bw", "-x", "3", "-n", "100000", "-d", verbs.DeviceName("host1:gpu0"), v.fe["host4"])
			cli <- result{code, out}
		}()
		deadline := time.Now().Add(20 * time.Second)
		for v.liveQPs("host1", "host1:gpu0") == 0 {
			if time.Now().After(deadline) {
				t.Fatal("the client never showed a QP in host1's telemetry")
			}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond)
		kill9(t, v.root, v.lab, "host1")
		r := <-cli
		if r.code == 0 {
			t.Errorf("ib_write_bw went on after its node died:\n%s", r.out)
		}
		if !strings.Contains(r.out, "is gone") {
			t.Errorf("ib_write_bw's output does not say the node is gone:\n%s", r.out)
		}
		t.Logf("ib_write_bw after its node died: exit %d\n%s", r.code, r.out)
		// The server's QP now waits for a peer that will not answer:
		// stop it by ending the lab (cleanup), not by waiting.
		kill9(t, v.root, v.lab, "host4")
		<-srvDone
	})
}

// TestVerbsDockerUserImage runs Debian's ibv_rc_pingpong in users'
// containers on the docker runtime: the image carries the program and
// the libraries it loads but no libibverbs; rocelab exec gives it the
// lab's (a bind of the lab's verbs directory) and the node's NICs.
func TestVerbsDockerUserImage(t *testing.T) {
	c := requireDocker(t)
	requireRoot(t)
	for _, tool := range []string{"ibv_rc_pingpong", "ibv_devinfo", "ldd"} {
		testenv.RequireTool(t, tool)
	}
	bin := binary(t)
	lib := filepath.Join(filepath.Dir(bin), "lib", verbs.LibName)
	verbsLibOnce.Do(func() { testenv.BuildVerbsLib(t, lib) })
	progs := []string{must(exec.LookPath("ibv_rc_pingpong")), must(exec.LookPath("ibv_devinfo"))}
	img := dockertest.WithFiles(t, c, dockertest.Busybox(t, c), progs, []string{verbs.LibName})
	root := runRoot(t)
	lab := labName(t, "vdock")
	file := userTopology(t, img, t.TempDir())
	t.Cleanup(func() { deploy.Destroy(context.Background(), root, lab) })
	if code, out, stderr := rocelabOut(t, "deploy", "-t", file, "--name", lab, "--root", root); code != 0 {
		t.Fatalf("deploy: exit %d\n%s\n%s", code, out, stderr)
	}
	v := &verbsLab{t: t, root: root, lab: lab, fe: map[string]string{"host4": "host4"}} // the containers know each other by name
	code, out := v.exec(context.Background(), 30*time.Second, "host1", "ibv_devinfo")
	if code != 0 || !strings.Contains(out, "rocelab_gpu0") {
		t.Fatalf("ibv_devinfo in host1's container: exit %d\n%s", code, out)
	}
	srv, cli := v.pair("host4", "host1", "ibv_rc_pingpong", "-g", "3", "-c", "-n", "20")
	if !strings.Contains(srv, "20 iters in") || !strings.Contains(cli, "20 iters in") {
		t.Errorf("ibv_rc_pingpong in containers:\nserver:\n%s\nclient:\n%s", srv, cli)
	}
}

// perftestClock is what perftest prints when it cannot calibrate its
// cycle counter against the wall clock (a loaded machine).
const perftestClock = "Correlation coefficient r^2"

// incast runs three ib_write_bw clients (host1..3) into host4:gpu0 at
// once and returns what failed.
func (v *verbsLab) incast() []string {
	var wg sync.WaitGroup
	errs := make(chan string, 6)
	for i, cli := range []string{"host1", "host2", "host3"} {
		port := strconv.Itoa(18515 + i)
		// 1,000 × 64 KiB is some 1.3 ms of fabric time, seconds
		// of wall clock: long enough that the three flows overlap however
		// late a loaded machine starts each program (300 did not, once,
		// beside two busy loops: no incast, no PFC).
		argv := []string{"ib_write_bw", "-x", "3", "-n", "1000", "-s", "65536", "-p", port}
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out := v.exec(context.Background(), 120*time.Second, "host4", append(argv, "-d", verbs.DeviceName("host4:gpu0"))...)
			if code != 0 {
				errs <- fmt.Sprintf("server for %s: exit %d\n%s", cli, code, out)
			}
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out := v.client(120*time.Second, cli, append(argv, "-d", verbs.DeviceName(cli+":gpu0"), v.fe["host4"])...)
			if code != 0 {
				errs <- fmt.Sprintf("client %s: exit %d\n%s", cli, code, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	var out []string
	for e := range errs {
		out = append(out, e)
	}
	return out
}
