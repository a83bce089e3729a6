package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childArgsEnv makes the test binary run the CLI with these arguments
// (separated by the unit separator, 0x1F) instead of the tests: TestHostileFilesMemoryCap runs
// commands in a child it can put a memory limit on.
const childArgsEnv = "ROCELAB_TEST_CLI_ARGS"

func TestMain(m *testing.M) {
	if a := os.Getenv(childArgsEnv); a != "" {
		root := newRootCmd(os.Stdout, os.Stderr)
		root.SetArgs(strings.Split(a, "\x1f"))
		os.Exit(exitCode(root.ExecuteContext(context.Background()), os.Stderr))
	}
	os.Exit(m.Run())
}

// TestHostileFilesMemoryCap gives every command that reads a file one
// that never ends — /dev/zero behind a symlink, a FIFO whose writer never
// stops — in a child process whose data segment is capped at 1 GiB: each
// must exit 2 with a sentence naming the file, within seconds, not grow
// until the machine runs out of memory (a scenario whose topology was
// /dev/zero grew `rocelab run --sim` to 23.8 GB).
func TestHostileFilesMemoryCap(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	scen := filepath.Join(dir, "scenario.yaml")
	os.WriteFile(scen, []byte("name: s\ntopology: "+zero+"\nworkloads:\n  - {kind: perf, from: host1, to: host4}\n"), 0o644)
	rep := filepath.Join(dir, "report")
	os.MkdirAll(rep, 0o755)
	os.WriteFile(filepath.Join(rep, "layout.json"), []byte(`{"scenario":"s"}`), 0o644)
	os.Symlink("/dev/zero", filepath.Join(rep, "metrics.json"))
	fifo := filepath.Join(dir, "endless.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		say  string
		feed bool // write to the FIFO without end
	}{
		{[]string{"validate", zero}, "not a file a topology can be read from", false},
		{[]string{"graph", "-t", zero}, "not a file a topology can be read from", false},
		{[]string{"deploy", "-t", zero, "--root", dir}, "not a file a topology can be read from", false},
		{[]string{"run", "--sim", scen}, "not a file a topology can be read from", false},
		{[]string{"dashboard", "--replay", rep, "--listen", "127.0.0.1:0"}, "not a file a report's metrics.json can be read from", false},
		{[]string{"validate", fifo}, "a topology may be at most 16 MiB", true},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", `ulimit -d 1048576 && exec "$0"`, os.Args[0])
		cmd.Env = append(os.Environ(), childArgsEnv+"="+strings.Join(c.args, "\x1f"))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		stop := make(chan struct{})
		if c.feed {
			go feed(fifo, stop)
		}
		err := cmd.Run()
		close(stop)
		timedOut := ctx.Err() == context.DeadlineExceeded
		cancel()
		code := cmd.ProcessState.ExitCode()
		if timedOut {
			t.Errorf("rocelab %s: still running after 60 s", strings.Join(c.args, " "))
		} else if code != 2 || !strings.Contains(out.String(), c.say) {
			t.Errorf("rocelab %s: exit %d (%v), want 2 saying %q\n%s", strings.Join(c.args, " "), code, err, c.say, out.String())
		}
	}
}

// feed writes to the FIFO at path until stop closes (or the reader goes).
func feed(path string, stop chan struct{}) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer f.Close()
	b := bytes.Repeat([]byte("a: b\n"), 1000)
	for {
		select {
		case <-stop:
			return
		default:
		}
		if _, err := f.Write(b); err != nil {
			return
		}
	}
}
