package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRunCmd(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nduration: -1ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		stdout   []string
		junit    []string
		hasPlots bool
	}{
		{name: "unmet", args: []string{"run", "--sim", "-q", "testdata/run-unmet.yaml"}, code: 1,
			stdout:   []string{"PASS  drops(class=lossless) == 0", "FAIL  bw(job=incast) >= 2 * line_rate(job=incast)", "wanted >= 200 Gb/s"},
			junit:    []string{`failures="1"`, `expectation &#34;bw(job=incast) &gt;= 2 * line_rate(job=incast)&#34; failed: bw(job=incast) = `},
			hasPlots: true},
		{name: "bad file", args: []string{"run", "--sim", bad}, code: 2,
			junit: []string{`errors="1"`, `type="validation"`, `bad.yaml:2:11: duration: negative duration`}},
		{name: "bad file in emulation", args: []string{"run", bad}, code: 2,
			junit: []string{`errors="1"`, `negative duration`}},
		{name: "fe in emulation", args: []string{"run", "../../examples/07-fe-checkpoint/scenario.yaml"}, code: 2,
			junit: []string{`errors="1"`, `kind fe is not supported in emulation yet`}},
		{name: "hier-allreduce in emulation", args: []string{"run", "../../examples/10-seed-24k/small.yaml"}, code: 2,
			junit: []string{`errors="1"`, `op hier-allreduce is not supported in emulation yet`}},
		{name: "workers without sim", args: []string{"run", "--workers", "2", "testdata/run-unmet.yaml"}, code: 2},
		{name: "aggregate without sim", args: []string{"run", "--aggregate", "on", "testdata/run-unmet.yaml"}, code: 2},
		{name: "aggregate bad value", args: []string{"run", "--sim", "--aggregate", "yes", "testdata/run-unmet.yaml"}, code: 2},
		{name: "aggregate on", args: []string{"run", "--sim", "-q", "--aggregate", "on", "testdata/run-unmet.yaml"}, code: 1,
			stdout: []string{"PASS  drops(class=lossless) == 0"}},
		{name: "workers for a large all-to-all", args: []string{"run", "--sim", "--workers", "2", "testdata/run-a2a-512.yaml"}, code: 2},
		{name: "node groups with a plain sim", args: []string{"run", "--sim", "--node-groups", "1", "testdata/run-unmet.yaml"}, code: 2},
		{name: "node groups with sim matching one group", args: []string{"run", "--sim", "-q", "--match-emulation", "--node-groups", "1", "testdata/run-unmet.yaml"}, code: 1,
			stdout: []string{"PASS  drops(class=lossless) == 0"}},
		{name: "workers for a collective", args: []string{"run", "--sim", "-q", "--workers", "2", "../../examples/07-fe-checkpoint/scenario.yaml"}, code: 0},
		{name: "chakra", args: []string{"run", "--sim", "-q", "--chakra", "../../examples/09-chakra/microbenchmarks/all_reduce/4npus_1MB", "--iters", "2"}, code: 0,
			stdout: []string{"scenario chakra-4npus_1MB (topology laptop", "STEP  step 0: 46.648us (4 ranks)", "STEP  step 1: "}},
		{name: "chakra on too few NICs", args: []string{"run", "--sim", "--chakra", "../../examples/09-chakra/microbenchmarks/all_reduce/16npus_1MB"}, code: 2,
			junit: []string{`errors="1"`, `has 16 ranks, the topology 8 back-end NICs`}},
		{name: "chakra and a file", args: []string{"run", "--sim", "--chakra", "../../examples/09-chakra/microbenchmarks/all_reduce/4npus_1MB", "testdata/run-unmet.yaml"}, code: 2},
		{name: "chakra flags without chakra", args: []string{"run", "--sim", "--peak-tflops", "3", "testdata/run-unmet.yaml"}, code: 2},
		{name: "chakra bad duration", args: []string{"run", "--sim", "--chakra", "../../examples/09-chakra/microbenchmarks/all_reduce/4npus_1MB", "--duration", "soon"}, code: 2},
		{name: "example", args: []string{"run", "--sim", "-q", "--seed", "3", "../../examples/02-dcqcn-vs-pfc/scenario.yaml"}, code: 0,
			stdout: []string{"seed 3", "PASS: 4 of 4 expectations hold"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			junit, rep := filepath.Join(out, "junit.xml"), filepath.Join(out, "report")
			args := append(tc.args, "--junit", junit, "--report", rep)
			code, stdout, _, err := runCLI(args...)
			if code != tc.code {
				t.Fatalf("exit %d (%v), want %d; stdout:\n%s", code, err, tc.code, stdout)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			if len(tc.junit) > 0 {
				data, err := os.ReadFile(junit)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range tc.junit {
					if !strings.Contains(string(data), s) {
						t.Errorf("junit lacks %q:\n%s", s, data)
					}
				}
			}
			if tc.hasPlots {
				for _, f := range []string{"summary.md", "metrics.csv", "metrics.json", "junit.xml", "plots/queues.png", "plots/queues.svg", "plots/flows.png", "plots/pfc.svg"} {
					if _, err := os.Stat(filepath.Join(rep, f)); err != nil {
						t.Errorf("report: %v", err)
					}
				}
			}
		})
	}
}

// TestRunSimStops: a stop (the context main cancels on Ctrl-C or SIGTERM)
// ends a run --sim of a 100,000 s scenario within a few wall-clock
// seconds (the run checks between chunks of about 0.1 s; before, once per
// duration/50 of fabric time: over a minute here), as an interruption.
func TestRunSimStops(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	type result struct {
		code   int
		stderr string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		code, _, stderr, err := runCLIContext(ctx, "run", "--sim", "-q", "testdata/run-long.yaml")
		done <- result{code, stderr, err}
	}()
	time.Sleep(500 * time.Millisecond)
	cancel()
	stopped := time.Now()
	select {
	case r := <-done:
		if !errors.Is(r.err, context.Canceled) || r.code == 0 {
			t.Fatalf("exit %d, %v; want it stopped by the cancel\n%s", r.code, r.err, r.stderr)
		}
		t.Logf("stopped %v after the cancel: %v", time.Since(stopped).Round(time.Millisecond), r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("run --sim still running 10 s after the cancel")
	}
}

// TestRunSimProgressInLogs: run --sim's progress to a stderr that is not a
// terminal (a CI log) is whole lines, a tenth of the run at a time, with
// no carriage returns or escape sequences; --version answers.
func TestRunSimProgressInLogs(t *testing.T) {
	code, _, stderr, err := runCLI("run", "--sim", "testdata/run-progress.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, stderr)
	}
	if strings.ContainsAny(stderr, "\r\x1b") {
		t.Errorf("control characters in a log:\n%q", stderr)
	}
	if n := strings.Count(stderr, "# fabric time "); n < 1 || n > 10 {
		t.Errorf("%d progress lines, want 1 to 10:\n%s", n, stderr)
	}
	if code, out, _, err := runCLI("--version"); code != 0 || !strings.HasPrefix(out, "rocelab ") {
		t.Errorf("--version: exit %d (%v), printed %q", code, err, out)
	}
}
