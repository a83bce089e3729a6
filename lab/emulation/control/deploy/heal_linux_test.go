package deploy_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
)

// rocelabWithin runs the built command, killing it after limit, and
// returns its exit code, output and how long it took. A command that had
// to be killed fails the test: no command may wait forever.
func rocelabWithin(t *testing.T, limit time.Duration, args ...string) (int, string, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, binary(t), args...).CombinedOutput()
	took := time.Since(start)
	t.Logf("rocelab %s: %v", args[0], took.Round(time.Millisecond))
	if ctx.Err() != nil {
		t.Fatalf("rocelab %v did not return within %v:\n%s", args, limit, out)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out), took
	}
	if err != nil {
		t.Fatalf("rocelab %v: %v", args, err)
	}
	return 0, string(out), took
}

// kill9 kills node's process with SIGKILL and waits until it is gone.
func kill9(t *testing.T, root, lab, node string) {
	t.Helper()
	_, n, err := deploy.FindNode(root, lab, node)
	if err != nil {
		t.Fatal(err)
	}
	p := proc.Process{PID: n.PID, StartTime: n.StartTime}
	if !p.Alive() {
		t.Fatalf("%s (%v) is not running before the kill", node, p)
	}
	if err := syscall.Kill(n.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); p.Alive(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s survived SIGKILL", node)
		}
	}
}

func wants(t *testing.T, what, out string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(out, s) {
			t.Errorf("%s: output lacks %q:\n%s", what, s, out)
		}
	}
}

// TestDeadNodeNamedAndHealed is issue 16's first item: with rtsw1's
// process killed, perf between racks used to print "0% 0 msgs" forever
// and stats and fault list failed on the dead socket. Now perf stops
// after --stall with rtsw1 named (exit 1), stats and fault list show the
// live nodes and mark rtsw1 DEAD (exit 1), a fault holding a link down
// is named the same way, and restart / deploy --repair bring a switch
// and an endpoint host back with their configuration: traffic flows
// again.
func TestDeadNodeNamedAndHealed(t *testing.T) {
	requireRoot(t)
	root := runRoot(t)
	lab := labName(t, "heal")
	before := snap(t)
	deployLab(t, "laptop", lab, root, deploy.Options{})
	at := []string{"--root", root, "--name", lab}
	perf := func(iters string, extra ...string) []string {
		return append(append([]string{"perf", "write", "--from", "host1", "--to", "host4", "--iters", iters, "--size", "4096"}, at...), extra...)
	}
	if code, out, _ := rocelabWithin(t, 60*time.Second, perf("50")...); code != 0 {
		t.Fatalf("perf on the healthy lab: exit %d\n%s", code, out)
	}
	// What is not a host's back-end NIC, or not a fault, is bad input
	// (exit 2) said with what the lab has instead (issue 24, item 5).
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"perf", "write", "--from", "host1", "--to", "host1:gpu7"}, "host1 has no NIC gpu7 (its back-end NICs: gpu0, gpu1)"},
		{[]string{"perf", "write", "--from", "host1", "--to", "rtsw1"}, "rtsw1 is a switch, not a host with back-end NICs (hosts: host1, host2, host3, host4)"},
		{[]string{"perf", "write", "--from", "st1", "--to", "host2"}, "st1 is a storage, not a host"},
		{[]string{"perf", "write", "--from", "host1:fe0", "--to", "host2"}, "host1:fe0 is a front-end NIC"},
		{[]string{"fault", "clear", "rtsw1/f999"}, "no fault rtsw1/f999 (rtsw1 has: none"},
	} {
		code, out, _ := rocelabWithin(t, 20*time.Second, append(tc.args, at...)...)
		if code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s", tc.args, code, tc.want, out)
		}
	}

	kill9(t, root, lab, "rtsw1")
	code, out, took := rocelabWithin(t, 30*time.Second, perf("1000000", "--stall", "2s")...)
	t.Logf("perf across dead rtsw1: exit %d after %v", code, took.Round(time.Millisecond))
	if code != 1 {
		t.Errorf("perf across dead rtsw1: exit %d, want 1\n%s", code, out)
	}
	wants(t, "perf across dead rtsw1", out, "no progress", "node rtsw1 is dead (process gone)", "rocelab restart rtsw1")

	code, out, _ = rocelabWithin(t, 20*time.Second, append([]string{"stats", "--interval", "100ms"}, at...)...)
	if code != 1 {
		t.Errorf("stats with rtsw1 dead: exit %d, want 1\n%s", code, out)
	}
	wants(t, "stats with rtsw1 dead", out, "rtsw1: DEAD", "ctsw1", "rtsw2", " p1 ")
	code, out, _ = rocelabWithin(t, 20*time.Second, append([]string{"fault", "list"}, at...)...)
	if code != 1 {
		t.Errorf("fault list with rtsw1 dead: exit %d, want 1\n%s", code, out)
	}
	wants(t, "fault list with rtsw1 dead", out, "rtsw1: DEAD")
	code, out, _ = rocelabWithin(t, 20*time.Second, append([]string{"inspect"}, at...)...)
	wants(t, "inspect with rtsw1 dead", out, "degraded", "process gone")

	// Heal the switch; traffic flows across it again.
	if code, out, _ := rocelabWithin(t, 40*time.Second, append([]string{"restart", "rtsw1"}, at...)...); code != 0 {
		t.Fatalf("restart rtsw1: exit %d\n%s", code, out)
	}
	if code, out, _ := rocelabWithin(t, 60*time.Second, perf("50")...); code != 0 {
		t.Fatalf("perf after restarting rtsw1: exit %d\n%s", code, out)
	}

	// 'A to B' covers every parallel link of that direction, 'A and B'
	// both directions (issue item 3); each fault's counts start at 0.
	for _, tc := range []struct {
		args []string
		rows int
	}{{[]string{"rtsw1", "to", "ctsw1", "delay", "1us"}, 2}, {[]string{"rtsw1", "and", "ctsw1", "delay", "1us"}, 4}, {[]string{"rtsw1:p6->ctsw1", "delay", "1us"}, 1}} {
		code, out, _ := rocelabWithin(t, 20*time.Second, append(append([]string{"fault", "add"}, tc.args...), at...)...)
		if n := strings.Count(out, "delay 1us on "); code != 0 || n != tc.rows {
			t.Errorf("fault add %v: exit %d, %d faults, want %d\n%s", tc.args, code, n, tc.rows, out)
		}
	}
	code, out, _ = rocelabWithin(t, 20*time.Second, append([]string{"fault", "list"}, at...)...)
	if code != 0 || strings.Count(out, "delayed=0 matched=0") != 7 {
		t.Errorf("fault list: exit %d, want 7 faults at delayed=0 matched=0\n%s", code, out)
	}
	// A target that the lab's topology does not have is bad input (exit
	// 2), said in the words of the one target grammar.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rtsw1", "to", "rtsw2"}, "no link between rtsw1 and rtsw2"},
		{[]string{"rtsw1:p9"}, `rtsw1 has no port "p9"`},
		{[]string{"ctsw9"}, `no node "ctsw9"`},
	} {
		code, out, _ := rocelabWithin(t, 20*time.Second, append(append(append([]string{"fault", "add"}, tc.args...), "loss", "1%"), at...)...)
		if code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("fault add %v: exit %d, want 2 and %q\n%s", tc.args, code, tc.want, out)
		}
	}
	// Drops a fault causes are in stats DROPS (issue item 4).
	if code, out, _ := rocelabWithin(t, 20*time.Second, append([]string{"fault", "add", "rtsw1", "loss", "5%"}, at...)...); code != 0 {
		t.Fatalf("fault add rtsw1 loss: exit %d\n%s", code, out)
	}
	if code, out, _ := rocelabWithin(t, 60*time.Second, perf("200", "--mode", "metaroce")...); code != 0 {
		t.Fatalf("perf through 5%% loss: exit %d\n%s", code, out)
	}
	code, out, _ = rocelabWithin(t, 20*time.Second, append([]string{"stats", "rtsw1", "--interval", "50ms", "-o", "json"}, at...)...)
	var rep struct {
		Ports []struct {
			Port   string             `json:"port"`
			Drops  map[string]float64 `json:"switch_drop_packets_total"`
			Faults map[string]float64 `json:"fault_packets_total"`
		} `json:"ports"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("stats rtsw1 -o json: exit %d, %v\n%s", code, err, out)
	}
	drops := 0.0
	for _, p := range rep.Ports {
		drops += p.Faults["dropped"]
		for _, n := range p.Drops {
			drops += n
		}
		if !strings.HasPrefix(p.Port, "p") {
			t.Errorf("stats port %q: want p1…pN", p.Port)
		}
	}
	if drops == 0 {
		t.Errorf("stats shows no drops on rtsw1 after a 5%% loss fault carried traffic:\n%s", out)
	}
	if code, out, _ := rocelabWithin(t, 20*time.Second, append([]string{"fault", "clear", "--all"}, at...)...); code != 0 {
		t.Fatalf("fault clear: exit %d\n%s", code, out)
	}

	// A link held down by a fault is named like a dead node.
	if code, out, _ := rocelabWithin(t, 20*time.Second, append([]string{"fault", "add", "rtsw2", "down"}, at...)...); code != 0 {
		t.Fatalf("fault add rtsw2 down: exit %d\n%s", code, out)
	}
	code, out, _ = rocelabWithin(t, 30*time.Second, perf("1000000", "--stall", "2s")...)
	if code != 1 {
		t.Errorf("perf across downed rtsw2: exit %d, want 1\n%s", code, out)
	}
	wants(t, "perf across downed rtsw2", out, "rtsw2/f1 down")
	if code, out, _ := rocelabWithin(t, 20*time.Second, append([]string{"fault", "clear", "--all"}, at...)...); code != 0 {
		t.Fatalf("fault clear: exit %d\n%s", code, out)
	}

	// A perf stalled behind a long delay is told so, not that something
	// is dead (issue 24, item 6).
	if code, out, _ := rocelabWithin(t, 20*time.Second, append([]string{"fault", "add", "rtsw2", "delay", "1s"}, at...)...); code != 0 {
		t.Fatalf("fault add rtsw2 delay 1s: exit %d\n%s", code, out)
	}
	code, out, _ = rocelabWithin(t, 30*time.Second, perf("1000000", "--stall", "2s")...)
	if code != 1 {
		t.Errorf("perf behind a 1 s delay: exit %d, want 1\n%s", code, out)
	}
	wants(t, "perf behind a 1 s delay", out, "or a fault holds its frames back", "delay 1s on rtsw2:p1", "holds frames back")
	if strings.Contains(out, "is dead (") {
		t.Errorf("perf behind a 1 s delay is told a node is dead:\n%s", out)
	}
	if code, out, _ := rocelabWithin(t, 20*time.Second, append([]string{"fault", "clear", "--all"}, at...)...); code != 0 {
		t.Fatalf("fault clear: exit %d\n%s", code, out)
	}

	// An endpoint host: deploy --repair finds and restarts it.
	kill9(t, root, lab, "host4")
	code, out, _ = rocelabWithin(t, 30*time.Second, perf("50")...)
	if code != 1 {
		t.Errorf("perf to dead host4: exit %d, want 1\n%s", code, out)
	}
	wants(t, "perf to dead host4", out, "host4")
	if code, out, _ := rocelabWithin(t, 40*time.Second, append([]string{"deploy", "--repair"}, at...)...); code != 0 || !strings.Contains(out, "restarted host4") {
		t.Fatalf("deploy --repair: exit %d\n%s", code, out)
	}
	if code, out, _ := rocelabWithin(t, 60*time.Second, perf("50")...); code != 0 {
		t.Fatalf("perf after repairing host4: exit %d\n%s", code, out)
	}
	if st, err := deploy.Inspect(t.Context(), root, lab); err != nil || len(st) != 1 || st[0].Status != "running" {
		t.Errorf("after repair: %+v, %v", st, err)
	}

	// Ctrl-C stops a long perf within seconds (not its 100 MB), exit 130.
	cmd := exec.Command(binary(t), perf("100000000")...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	cmd.Process.Signal(os.Interrupt)
	sent := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("perf after SIGINT: %v, want exit 130", err)
		}
		// Stopping is four API calls on endpoint loops busy at line
		// rate; a loaded machine can hold a loop for hundreds of ms.
		if took := time.Since(sent); took > 5*time.Second {
			t.Errorf("perf took %v to stop after SIGINT, want < 5 s", took)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("perf ignored SIGINT for 10 s")
	}

	// Destroy finds the restarted processes (children of no one now)
	// through the books, and leaves nothing.
	l, err := deploy.OnlyLab(t.Context(), root, lab)
	if err != nil {
		t.Fatal(err)
	}
	// A perf running when the lab is destroyed is told that the lab is
	// gone, not to restart its nodes (issue 24, item 6).
	var perfOut strings.Builder
	bg := exec.Command(binary(t), perf("100000000", "--stall", "2s")...)
	bg.Stdout, bg.Stderr = &perfOut, &perfOut
	if err := bg.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if code, out, _ := rocelabWithin(t, 30*time.Second, "destroy", "--name", lab, "--root", root); code != 0 {
		t.Fatalf("destroy: exit %d\n%s", code, out)
	}
	perfDone := make(chan error, 1)
	go func() { perfDone <- bg.Wait() }()
	select {
	case <-perfDone:
		if got := perfOut.String(); !strings.Contains(got, "lab "+lab+" is gone") || strings.Contains(got, "rocelab restart") {
			t.Errorf("perf under destroy: want 'lab %s is gone' and no restart advice:\n%s", lab, got)
		}
	case <-time.After(20 * time.Second):
		bg.Process.Kill()
		t.Error("perf still running 20 s after its lab was destroyed")
	}
	for _, n := range l.Nodes {
		if p := (proc.Process{PID: n.PID, StartTime: n.StartTime}); n.PID != 0 && p.Alive() {
			t.Errorf("%s (%v) survived destroy", n.Name, p)
		}
	}
	sameSnapshot(t, before)
}
