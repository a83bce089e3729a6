package deploy_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/deploy"
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
	newVerbsLabWith(t, deploy.Options{NodeGroups: 1}).runStacks(t)
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
	script, _ := filepath.Abs("../verbs/libibverbs/testdata/pyverbs_write.py")
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

// ucxPerftest runs ucx_perftest tag_bw host1 -> host4 over the lab's NICs
// (UCX_TLS=rc_verbs,ud_verbs: RC for the data, UD to set the RC
// connections up, as UCP's wire-up needs a datagram transport) and checks
// that its bytes crossed host4's rack switch.
func (v *verbsLab) ucxPerftest(t *testing.T) {
	t.Helper()
	testenv.RequireTool(t, "ucx_perftest")
	env := []string{"env", "UCX_TLS=rc_verbs,ud_verbs", "UCX_NET_DEVICES=rocelab_gpu0:1"}
	labels := map[string]string{"port": "2"} // rtsw2:p3, host4:gpu0's port
	before := v.counter("rtsw2", "switch_port_tx_bytes_total", labels)
	type result struct {
		code int
		out  string
	}
	done := make(chan result, 1)
	go func() {
		code, out := v.exec(context.Background(), 120*time.Second, "host4", append(env, "ucx_perftest")...)
		done <- result{code, out}
	}()
	code, out := -1, ""
	for try := 0; try < 50; try++ {
		time.Sleep(200 * time.Millisecond)
		code, out = v.exec(context.Background(), 120*time.Second, "host1",
			append(env, "ucx_perftest", v.fe["host4"], "-t", "tag_bw", "-s", "65536", "-n", "300")...)
		if code == 0 || !strings.Contains(out, "connect") {
			break
		}
	}
	srv := <-done
	if code != 0 || srv.code != 0 || !strings.Contains(out, "Final:") {
		t.Fatalf("ucx_perftest tag_bw host1 -> host4: client exit %d, server exit %d\nclient:\n%s\nserver:\n%s", code, srv.code, lastLines(out, 30), lastLines(srv.out, 30))
	}
	const want = 300 * 65536
	if moved := v.counter("rtsw2", "switch_port_tx_bytes_total", labels) - before; moved < want {
		t.Errorf("ucx_perftest moved %d bytes; rtsw2:p3 sent %.0f more, want at least that", want, moved)
	} else {
		t.Logf("ucx_perftest tag_bw: rtsw2:p3 sent %.0f bytes for UCX's %d\n%s", moved, want, lastLines(out, 3))
	}
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	l := strings.Split(s, "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}
