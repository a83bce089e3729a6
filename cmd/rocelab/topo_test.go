package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run executes the CLI in-process and returns stdout, stderr and the exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(&out, &errb)
	root.SetArgs(args)
	err := root.Execute()
	code := 0
	if err != nil {
		code = 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		} else if isUsageError(err) {
			code = 2
		}
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), code
}

func TestValidateCmd(t *testing.T) {
	out, _, code := run(t, "validate")
	if code != 0 || !strings.Contains(out, "laptop.yaml: ok") || !strings.Contains(out, "GPUs   8") {
		t.Errorf("validate (default laptop): code %d, out %q", code, out)
	}
	out, _, code = run(t, "validate", "-t", "../../topologies/two-zones.yaml", "-o", "json")
	var res struct {
		Valid bool `json:"valid"`
		GPUs  int  `json:"gpus"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || !res.Valid || res.GPUs != 128 {
		t.Errorf("validate -o json: code %d, %+v, out %q", code, res, out)
	}

	bad, _ := filepath.Glob("../../topologies/testdata/bad/*.yaml")
	if len(bad) == 0 {
		t.Fatal("no bad files")
	}
	for _, f := range bad {
		_, errOut, code := run(t, "validate", "-t", f)
		if code != 2 {
			t.Errorf("validate %s: exit %d, want 2", f, code)
		}
		if !strings.Contains(errOut, f+":") {
			t.Errorf("validate %s: stderr %q lacks FILE:LINE:COL", f, errOut)
		}
	}
	if _, _, code := run(t, "validate", "-t", "/nonexistent.yaml"); code != 2 {
		t.Errorf("missing file: exit %d, want 2", code)
	}
	// The file as an argument, as `run FILE` takes it; given twice it is
	// bad usage.
	if out, _, code := run(t, "validate", "../../topologies/incast.yaml"); code != 0 || !strings.Contains(out, "incast.yaml: ok") {
		t.Errorf("validate FILE: exit %d, out %q", code, out)
	}
	if _, errOut, code := run(t, "validate", "-t", "laptop", "../../topologies/incast.yaml"); code != 2 || !strings.Contains(errOut, "once") {
		t.Errorf("validate -t A B: exit %d, err %q; want 2", code, errOut)
	}
	out, _, code = run(t, "validate", "--schema")
	if code != 0 || !strings.Contains(out, `"$schema"`) {
		t.Errorf("validate --schema: %d %q", code, out[:min(len(out), 80)])
	}
}

func TestTopoGenCmd(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "z.yaml")
	if _, errOut, code := run(t, "topo", "gen", "clos", "--hosts", "16", "--gpus", "4", "--rtsw", "4", "--ctsw", "2", "--storage", "1", "-w", file); code != 0 {
		t.Fatalf("topo gen clos: exit %d: %s", code, errOut)
	}
	out, _, code := run(t, "validate", "-t", file, "-o", "json")
	if code != 0 || !strings.Contains(out, `"gpus": 64`) {
		t.Errorf("generated file: exit %d: %s", code, out)
	}
	out, _, code = run(t, "topo", "gen", "multizone", "--zones", "2", "--hosts", "4", "--gpus", "2", "--rtsw", "2", "--ctsw", "2", "--atsw", "2", "--zone-oversubscription", "2:1")
	if code != 0 || !strings.Contains(out, "z2-host4") || !strings.Contains(out, "atsw2") {
		t.Errorf("topo gen multizone: exit %d", code)
	}
	if _, _, code := run(t, "topo", "gen", "clos", "--hosts", "2", "--rtsw", "4"); code != 2 {
		t.Errorf("impossible generator: exit %d, want 2", code)
	}
	if _, _, code := run(t, "topo", "gen", "clos", "--oversubscription", "x"); code != 2 {
		t.Errorf("bad ratio: exit %d, want 2", code)
	}
}

func TestGraphCmd(t *testing.T) {
	for _, f := range []string{"svg", "dot", "mermaid"} {
		out, errOut, code := run(t, "graph", "-t", "laptop", "-f", f)
		if code != 0 || len(out) < 100 {
			t.Errorf("graph -f %s: exit %d %s", f, code, errOut)
		}
	}
	file := filepath.Join(t.TempDir(), "g.svg")
	if _, errOut, code := run(t, "graph", "-t", "ai-zone-64", "-w", file); code != 0 {
		t.Fatalf("graph -w: exit %d %s", code, errOut)
	}
	if data, err := os.ReadFile(file); err != nil || !bytes.HasPrefix(data, []byte("<svg")) {
		t.Errorf("graph -w wrote %d bytes, %v", len(data), err)
	}
	if _, _, code := run(t, "graph", "-f", "png"); code != 2 {
		t.Errorf("graph -f png: exit %d, want 2", code)
	}
}

func TestTopoShowCmd(t *testing.T) {
	out, _, code := run(t, "topo", "show", "-t", "laptop", "--lab", "demo")
	if code != 0 || !strings.Contains(out, "198.18.0.1/31") || !strings.Contains(out, "IFNAME") {
		t.Errorf("topo show: exit %d: %s", code, out)
	}
}

// TestTopoGenTooManyPorts: 64 hosts × 8 GPUs on the default 4 RTSWs need
// 256 ports a leaf; the error says which count to raise, and to what,
// without a position in a file the user never saw.
func TestTopoGenTooManyPorts(t *testing.T) {
	_, errOut, code := run(t, "topo", "gen", "clos", "--hosts", "64")
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	for _, want := range []string{"rtsw1 would need 256 ports (at most 255)", "--rtsw 7"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
	if strings.Contains(errOut, "clos.yaml:") {
		t.Errorf("stderr %q names a position in a file that was never written", errOut)
	}
	// The suggestion works.
	if out, errOut, code := run(t, "topo", "gen", "clos", "--hosts", "64", "--rtsw", "7"); code != 0 || !strings.Contains(out, "rtsw7") {
		t.Errorf("--rtsw 7: exit %d, %s", code, errOut)
	}
}

// TestDashboardUsage: bad flags and a directory that is no report are bad
// input (exit 2), before anything listens.
func TestDashboardUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"listen without port", []string{"dashboard", "--listen", "127.0.0.1", "--replay", t.TempDir()}, "HOST:PORT"},
		{"interval too short", []string{"dashboard", "--interval", "1ms", "--replay", t.TempDir()}, "want 50ms to"},
		{"not a report", []string{"dashboard", "--replay", t.TempDir(), "--listen", "127.0.0.1:0"}, "layout.json"},
		{"replay and a lab", []string{"dashboard", "--replay", t.TempDir(), "--name", "x", "--listen", "127.0.0.1:0"}, "no --name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := run(t, tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tc.want)
			}
		})
	}
}
