package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rocelab/rocelab/internal/testenv"
)

// TestBadInputNoLab: bad words are refused with exit 2 and a sentence
// before any lab is looked for (none is deployed under this root).
func TestBadInputNoLab(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		args []string
		say  string
	}{
		{[]string{"fault", "add", "rtsw1", "loss", "-1%"}, "-1%: fault parameters are not negative"},
		{[]string{"fault", "add", "rtsw1", "delay", "-5us"}, "-5us: fault parameters are not negative"},
		{[]string{"perf", "write", "--from", "host1", "--to", "host2", "--iters", "-1"}, "--iters -1: want 1 to"},
		{[]string{"perf", "write", "--from", "host1", "--to", "host2", "--qps", "0"}, "--qps 0: want 1 to 4096"},
		{[]string{"perf", "write", "--from", "host2:gpu0", "--to", "host3:gpu0", "--qps", "100000"}, "--qps 100000: want 1 to 4096"},
		{[]string{"perf", "write", "--from", "host1", "--to", "host2", "--tx-depth", "-3"}, "--tx-depth -3: want 1 to"},
		// What a node used to refuse (exit 1) or nothing refused (issue 48).
		{[]string{"perf", "write", "--from", "host1", "--to", "host2", "--cc", "foo"}, `--cc "foo": want`},
		{[]string{"perf", "write", "--from", "host1", "--to", "host2", "--mode", "x"}, `--mode "x": want rocev2 or metaroce`},
		{[]string{"perf", "write", "--from", "host1", "--to", "host2", "--paths", "0"}, "--paths 0: want 1 to 64"},
		{[]string{"perf", "write", "--from", "host1", "--to", "host2", "--paths", "-1"}, "--paths -1: want 1 to 64"},
		{[]string{"perf", "write", "--from", "host1", "--to", "host2", "--paths", "8"}, "--paths 8: a rocev2 QP sends on one path"},
		{[]string{"collective", "allreduce", "--type", "double"}, `--type "double": want float or int32`},
		{[]string{"collective", "allreduce", "--window", "-1"}, "--window -1: want 0 to 4096"},
		{[]string{"run", "--scale", "-5", "x.yaml"}, "--scale -5: want 1 to 1000000"},
		{[]string{"run", "--sim", "--match-emulation", "--scale", "0", "x.yaml"}, "--scale 0: want 1 to 1000000"},
		{[]string{"deploy", "--name", ""}, `--name "": invalid lab name`},
		{[]string{"deploy", "--scale", "9223372036854775807"}, "want 1 to 1000000, or auto"},
		{[]string{"exec", "--name", "abuse-1/.", "host1", "--", "true"}, `--name "abuse-1/.": invalid lab name`},
	} {
		code, _, stderr, err := runCLI(append(tc.args, "--root", root)...)
		if code != 2 || !strings.Contains(stderr+errString(err), tc.say) {
			t.Errorf("%v: exit %d (%v), want 2 saying %q", tc.args, code, err, tc.say)
		}
	}
}

// TestDashboardListenExit: one rule for --listen: an address that is not
// this machine's or a bad port is bad input (exit 2); a port already in
// use is the machine's state (exit 1).
func TestDashboardListenExit(t *testing.T) {
	rep := filepath.Join(t.TempDir(), "report")
	if code, _, _, err := runCLI("run", "--sim", "-q", "testdata/run-unmet.yaml", "--report", rep); code != 1 {
		t.Fatalf("make a report: exit %d (%v)", code, err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		listen string
		code   int
	}{
		{"bad", 2},
		{"127.0.0.1:99999", 2},
		{"192.0.2.1:9464", 2}, // TEST-NET-1: never this machine's
		{busy.Addr().String(), 1},
	} {
		code, _, stderr, err := runCLI("dashboard", "--replay", rep, "--listen", tc.listen)
		if code != tc.code {
			t.Errorf("--listen %s: exit %d (%v %s), want %d", tc.listen, code, err, stderr, tc.code)
		}
	}
}

// TestAgentRefuses: the agent serves root's commands over TCP, so it
// refuses wildcard addresses and, without --insecure, to run without a
// token (it only warned).
func TestAgentRefuses(t *testing.T) {
	t.Setenv("ROCELAB_AGENT_TOKEN", "")
	t.Setenv("ROCELAB_AGENT_TOKEN_FILE", "")
	rows := []struct {
		args []string
		say  string
		root bool
	}{
		{[]string{"agent", "--underlay", "0.0.0.0"}, "--underlay 0.0.0.0: a wildcard address", false},
		{[]string{"agent", "--underlay", "::"}, "--underlay ::: a wildcard address", false},
		{[]string{"agent", "--underlay", "10.1.2.3", "--listen", "0.0.0.0:7470"}, "--listen 0.0.0.0:7470: a wildcard address", false},
		{[]string{"agent", "--underlay", "10.1.2.3", "--listen", ":7470"}, "--listen :7470: an empty address", false},
		{[]string{"agent", "--underlay", "10.1.2.3", "--root", t.TempDir()}, "no token", true},
	}
	for _, r := range rows {
		if r.root {
			testenv.RequireRoot(t)
		}
		code, _, stderr, err := runCLI(r.args...)
		if code != 2 || !strings.Contains(stderr+errString(err), r.say) {
			t.Errorf("%v: exit %d (%v), want 2 saying %q", r.args, code, err, r.say)
		}
	}
}

// TestServersExit130OnSignal: a dashboard serving until Ctrl-C (or an
// agent until SIGTERM) exits 130 like every interrupted command; they
// exited 0.
func TestServersExit130OnSignal(t *testing.T) {
	bin := testenv.BuildRocelab(t)
	rep := filepath.Join(t.TempDir(), "report")
	if code, _, _, err := runCLI("run", "--sim", "-q", "testdata/run-unmet.yaml", "--report", rep); code != 1 {
		t.Fatalf("make a report: exit %d (%v)", code, err)
	}
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		cmd := exec.Command(bin, "dashboard", "--replay", rep, "--listen", "127.0.0.1:0")
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4096)
		n, _ := out.Read(buf) // the "dashboard of …" line: it serves
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 130 {
			t.Errorf("dashboard after %v: exit %d (%v), want 130; it said %q", sig, code, err, buf[:n])
		}
	}
}
