package deploy_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
)

// The stacks beyond RC verbs that people run over the lab's NICs: SRQs,
// UD datagrams, the files programs look for around the library, rdma-core's
// pyverbs and UCX. TestVerbsPrograms runs them on a lab with a process per
// node, TestVerbsStacksOneGroup on one in one node group.

// runStacks runs the stacks' checks as subtests of t.
func (v *verbsLab) runStacks(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"srq_pingpong", v.srqPingpong}, {"ud_pingpong", v.udPingpong}, {"host_files", v.hostFiles},
		{"pyverbs", v.pyverbsWrite}, {"ucx_info", v.ucxInfo}, {"ucx_perftest", v.ucxPerftest},
		{"atomics", v.atomics}, {"mpi_allreduce", v.mpiAllreduce},
	} {
		t.Run(c.name, func(t *testing.T) {
			v.t = t
			c.run(t)
		})
	}
}

// TestVerbsStacksOneGroup runs the stacks on the laptop lab deployed in one
// node group (rocelab run's and the demo's shape, k about ten times smaller
// than a process per node's).
func TestVerbsStacksOneGroup(t *testing.T) {
	v := newVerbsLabWith(t, deploy.Options{NodeGroups: 1})
	v.runStacks(t)
	t.Run("mpi_back_end_down", func(t *testing.T) {
		v.t = t
		v.mpiBackEndDown(t)
	})
}

// srqPingpong runs ibv_srq_pingpong: 16 RC QPs that share one receive queue.
func (v *verbsLab) srqPingpong(t *testing.T) {
	srv, cli := v.pair("host4", "host1", "ibv_srq_pingpong", "-g", "3", "-n", "100")
	for _, out := range []string{srv, cli} {
		if !strings.Contains(out, "100 iters in") || strings.Count(out, "remote address:") != 16 {
			t.Errorf("ibv_srq_pingpong did not run its 16 QPs' iterations:\n%s", out)
		}
	}
}

// udPingpong runs ibv_ud_pingpong: UD QPs, address handles, the GRH in
// the receive buffer.
func (v *verbsLab) udPingpong(t *testing.T) {
	srv, cli := v.pair("host4", "host1", "ibv_ud_pingpong", "-g", "3", "-n", "100", "-s", "1024")
	for _, out := range []string{srv, cli} {
		if !strings.Contains(out, "100 iters in") {
			t.Errorf("ibv_ud_pingpong did not report its iterations:\n%s", out)
		}
	}
}

// atomics runs perftest's ib_atomic_bw (FetchAdd) and ib_atomic_lat
// (CmpSwap) host1 -> host4.
func (v *verbsLab) atomics(t *testing.T) {
	for _, argv := range [][]string{
		{"ib_atomic_bw", "-x", "3", "-n", "500", "-A", "FETCH_AND_ADD"},
		{"ib_atomic_lat", "-x", "3", "-n", "100", "-A", "CMP_AND_SWAP"},
	} {
		testenv.RequireTool(t, argv[0])
		_, cli := v.pair("host4", "host1", argv...)
		if !regexp.MustCompile(`(?m)^ 8 +` + argv[4] + ` `).MatchString(cli) {
			t.Errorf("%s did not report its %s 8-byte iterations:\n%s", argv[0], argv[4], lastLines(cli, 6))
		} else {
			t.Logf("%s", lastLines(cli, 3))
		}
	}
}

// hostFiles checks what a program under rocelab exec finds around the
// library: the uverbs character devices and the sysfs files UCX reads.
func (v *verbsLab) hostFiles(t *testing.T) {
	code, out := v.exec(context.Background(), 30*time.Second, "host1", "sh", "-c",
		"stat -c '%F %t:%T' /dev/infiniband/uverbs0; cat /sys/class/infiniband/rocelab_gpu0/ports/1/gid_attrs/types/3 /sys/class/infiniband/rocelab_gpu1/ports/1/gid_attrs/ndevs/3")
	if code != 0 || !strings.Contains(out, "character special file e7:c0\nRoCE v2\nrl") {
		t.Errorf("the host's verbs files under rocelab exec: exit %d\n%s", code, out)
	}
	if _, err := os.Stat("/dev/infiniband/uverbs0"); err == nil {
		t.Log("the machine has /dev/infiniband/uverbs0 of its own")
	}
}

// pyverbsWrite: Debian's pyverbs (rdma-core's Python binding) imports —
// every symbol it binds is there — and moves bytes with an RDMA WRITE
// between host1's two NICs.
func (v *verbsLab) pyverbsWrite(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import pyverbs").Run(); err != nil {
		testenv.Missing(t, "Debian's pyverbs (python3-pyverbs)")
	}
	script, _ := filepath.Abs("../../datapath/verbs/libibverbs/testdata/pyverbs_write.py")
	code, out := v.exec(context.Background(), 90*time.Second, "host1", "/usr/bin/python3", script)
	if code != 0 || !strings.Contains(out, "pyverbs: ok") {
		t.Errorf("pyverbs WRITE between host1's NICs: exit %d\n%s", code, out)
	}
}

// ucxInfo: UCX finds the NICs (its device check, the GID it picks, the RC
// transport's QP with a gather list of five and an SRQ).
func (v *verbsLab) ucxInfo(t *testing.T) {
	testenv.RequireTool(t, "ucx_info")
	code, out := v.exec(context.Background(), 60*time.Second, "host1", "env", "UCX_LOG_LEVEL=debug", "ucx_info", "-d")
	for _, want := range []string{"Memory domain: rocelab_gpu0", "Memory domain: rocelab_gpu1", "Transport: rc_verbs",
		"rocelab_gpu0:1 using gid_index 3", "put_zcopy: <= 2G, up to 5 iov"} {
		if !strings.Contains(out, want) {
			t.Errorf("ucx_info -d (exit %d) lacks %q:\n%s", code, want, lastLines(out, 60))
		}
	}
}

// ucxPerftest runs ucx_perftest host1 -> host4 over the lab's NICs:
// UCP's tag_bw (UCX_TLS=rc_verbs,ud_verbs: RC for the data, UD to set the
// RC connections up, as UCP's wire-up needs a datagram transport), whose
// bytes must cross host4's rack switch; then the UCT-level put_bw
// (rc_verbs, zero-copy RDMA WRITEs) and am_lat on rc_verbs and ud_verbs.
func (v *verbsLab) ucxPerftest(t *testing.T) {
	t.Helper()
	testenv.RequireTool(t, "ucx_perftest")
	env := []string{"env", "UCX_TLS=rc_verbs,ud_verbs", "UCX_NET_DEVICES=rocelab_gpu0:1"}
	labels := map[string]string{"port": "2"} // rtsw2:p3, host4:gpu0's port
	before := v.counter("rtsw2", "switch_port_tx_bytes_total", labels)
	out := v.ucxPair(t, env, "-t", "tag_bw", "-s", "65536", "-n", "300")
	const want = 300 * 65536
	if moved := v.counter("rtsw2", "switch_port_tx_bytes_total", labels) - before; moved < want {
		t.Errorf("ucx_perftest moved %d bytes; rtsw2:p3 sent %.0f more, want at least that", want, moved)
	} else {
		t.Logf("ucx_perftest tag_bw: rtsw2:p3 sent %.0f bytes for UCX's %d\n%s", moved, want, lastLines(out, 3))
	}
	for _, uct := range [][]string{
		{"-x", "rc_verbs", "-t", "put_bw", "-D", "zcopy", "-s", "65536", "-n", "100"},
		{"-x", "rc_verbs", "-t", "am_lat", "-s", "8", "-n", "100"},
		{"-x", "ud_verbs", "-t", "am_lat", "-s", "8", "-n", "100"},
	} {
		out := v.ucxPair(t, []string{"ucx_perftest", "-d", "rocelab_gpu0:1", uct[0], uct[1]}, uct[2:]...)
		t.Logf("ucx_perftest %v:\n%s", uct, lastLines(out, 2))
	}
}

// ucxPair runs ucx_perftest's server on host4 with the command prefix
// cmd (env settings or ucx_perftest with its UCT device and transport)
// and its client on host1 with args too; the client retries while the
// server does not listen yet. Both must exit 0 and the client print its
// final line, which ucxPair returns with the rest of the client's output.
func (v *verbsLab) ucxPair(t *testing.T, cmd []string, args ...string) string {
	t.Helper()
	argv := func(more ...string) []string {
		a := append([]string(nil), cmd...)
		if cmd[0] == "env" {
			a = append(a, "ucx_perftest")
		}
		return append(a, more...)
	}
	type result struct {
		code int
		out  string
	}
	done := make(chan result, 1)
	go func() {
		code, out := v.exec(context.Background(), 120*time.Second, "host4", argv()...)
		done <- result{code, out}
	}()
	code, out := -1, ""
	for try := 0; try < 50; try++ {
		time.Sleep(200 * time.Millisecond)
		code, out = v.exec(context.Background(), 120*time.Second, "host1", argv(append([]string{v.fe["host4"]}, args...)...)...)
		if code == 0 || !strings.Contains(out, "connect") {
			break
		}
	}
	srv := <-done
	if code != 0 || srv.code != 0 || !strings.Contains(out, "Final:") {
		t.Fatalf("ucx_perftest %v host1 -> host4: client exit %d, server exit %d\nclient:\n%s\nserver:\n%s", args, code, srv.code, lastLines(out, 30), lastLines(srv.out, 30))
	}
	return out
}

// mpiRun builds testdata/mpi_allreduce.c with Debian's mpicc and runs it
// with Open MPI's mpirun from host1 over 8 ranks, one per GPU NIC of the
// 4 hosts: the launcher's agent is rocelab exec, its own TCP stays on the
// front end, and the ranks talk through pml ucx over the lab's NICs
// (rc_verbs for the data, ud_verbs for UCX's wire-up). It returns mpirun's
// exit code and output.
func (v *verbsLab) mpiRun(t *testing.T, limit time.Duration, args ...string) (int, string) {
	t.Helper()
	testenv.RequireTool(t, "mpicc")
	testenv.RequireTool(t, "mpirun")
	testenv.RequireTool(t, "ucx_info")
	dir := t.TempDir()
	src, _ := filepath.Abs("../../datapath/verbs/libibverbs/testdata/mpi_allreduce.c")
	prog := filepath.Join(dir, "mpi_allreduce")
	if out, err := exec.Command("mpicc", "-O2", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("mpicc: %v\n%s", err, out)
	}
	agent := filepath.Join(dir, "rsh")
	rank := filepath.Join(dir, "rank.sh")
	for path, body := range map[string]string{
		// Each host's daemon gets a TMPDIR of its own: the daemons share
		// the machine's /tmp and host name, and Open MPI's session
		// directories would collide ("mkdir … File exists").
		agent: fmt.Sprintf("#!/bin/sh\nhost=$1; shift\nmkdir -p %[4]s/$host\nexec %[1]s exec --root %[2]s --name %[3]s \"$host\" -- env TMPDIR=%[4]s/$host sh -c \"$*\"\n",
			binary(t), v.root, v.lab, dir),
		rank: "#!/bin/sh\nexport UCX_NET_DEVICES=rocelab_gpu${OMPI_COMM_WORLD_LOCAL_RANK:-0}:1\nexec \"$@\"\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	argv := []string{"mpirun", "--allow-run-as-root", "-np", "8", "-H", "host1:2,host2:2,host3:2,host4:2",
		"--mca", "plm_rsh_agent", agent, "--mca", "routed", "direct", "--mca", "oob_tcp_if_include", "198.19.0.0/16",
		"--mca", "btl", "^openib,uct,tcp", "--mca", "pml", "ucx", "-x", "UCX_TLS=rc_verbs,ud_verbs", rank, prog}
	return v.exec(context.Background(), limit, "host1", append(argv, args...)...)
}

// mpiAllreduce runs an MPI_Allreduce of 1 MiB over 8 ranks, checked
// element by element, and checks that its bytes crossed host3's and
// host4's rack switch (the back end), not only the front end.
func (v *verbsLab) mpiAllreduce(t *testing.T) {
	const bytes = 1 << 20
	before := v.counter("rtsw2", "switch_port_tx_bytes_total", nil)
	code, out := v.mpiRun(t, 300*time.Second, fmt.Sprint(bytes), "2")
	if code != 0 && udWireUpTimedOut(out) {
		// Known and open (docs/verbs.md, "Known problems"): under the
		// whole suite's load, about one run in three saw a UD endpoint of
		// UCX's wire-up get no answer for UCX_UD_TIMEOUT (30 s). Once more
		// tells that flake from a broken allreduce, which fails twice.
		t.Logf("UCX's UD wire-up timed out (a known problem under load): running mpirun once more\n%s", problemLines(out, 4))
		code, out = v.mpiRun(t, 300*time.Second, fmt.Sprint(bytes), "2")
	}
	if code != 0 || !strings.Contains(out, "8 ranks, 1048576 bytes, 0 wrong elements") {
		t.Fatalf("mpirun of an 8-rank MPI_Allreduce: exit %d\nwhat UCX and Open MPI said went wrong:\n%s\nthe end of the output:\n%s", code, problemLines(out, 20), lastLines(out, 40))
	}
	// Each of host3's and host4's 4 ranks sends about 2 x 7/8 of the
	// buffer per call, over 3 calls, through rtsw2.
	if moved := v.counter("rtsw2", "switch_port_tx_bytes_total", nil) - before; moved < 4*bytes {
		t.Errorf("the allreduce moved 3 x %d bytes per rank; rtsw2 sent %.0f bytes, want at least %d", bytes, moved, 4*bytes)
	} else {
		t.Logf("MPI_Allreduce: rtsw2 sent %.0f bytes\n%s", moved, lastLines(out, 2))
	}
}

// mpiBackEndDown takes host4's two GPU links down and checks that the
// same allreduce fails (UCX gives up on its peers) rather than finding
// another way (the front end) or hanging.
func (v *verbsLab) mpiBackEndDown(t *testing.T) {
	at := []string{"--root", v.root, "--name", v.lab}
	for _, nic := range []string{"host4:gpu0", "host4:gpu1"} {
		if code, out, _ := rocelabWithin(t, 20*time.Second, append([]string{"fault", "add", nic, "down"}, at...)...); code != 0 {
			t.Fatalf("fault add %s down: exit %d\n%s", nic, code, out)
		}
	}
	defer func() {
		if code, out, _ := rocelabWithin(t, 20*time.Second, append([]string{"fault", "clear", "--all"}, at...)...); code != 0 {
			t.Errorf("fault clear: exit %d\n%s", code, out)
		}
	}()
	code, out := v.mpiRun(t, 300*time.Second, "1048576", "2")
	if code == 0 {
		t.Fatalf("mpirun succeeded with host4's back-end links down:\n%s", lastLines(out, 20))
	}
	t.Logf("with host4's back-end links down, mpirun exited %d:\n%s", code, lastLines(out, 4))
}

// lastLines is the last n lines of s.
// udWireUpTimedOut reports whether mpirun's output is UCX giving up on a
// UD endpoint of its wire-up.
func udWireUpTimedOut(out string) bool {
	return strings.Contains(out, "UD endpoint") && strings.Contains(out, "unhandled timeout error")
}

// problemLines returns the first n lines of s that say what failed (UCX's
// and Open MPI's error, fatal and timeout lines), which a backtrace pushes
// out of the last lines.
func problemLines(s string, n int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		low := strings.ToLower(l)
		if len(out) < n && (strings.Contains(low, "error") || strings.Contains(low, "fatal") || strings.Contains(low, "timeout") || strings.Contains(low, "failed")) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func lastLines(s string, n int) string {
	l := strings.Split(s, "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}
