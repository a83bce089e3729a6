package verbs_test

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/internal/testenv"
)

// systemLib finds the system's libibverbs.so.1 (Debian: libibverbs1, which
// libibverbs-dev brings), or skips t (fails it under CI).
func systemLib(t *testing.T) string { return systemLibNamed(t, "libibverbs.so.1", "libibverbs1") }

// systemLibNamed finds the system's library name (of Debian package pkg).
func systemLibNamed(t *testing.T, name, pkg string) string {
	t.Helper()
	for _, dir := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	testenv.Missing(t, fmt.Sprintf("the system's %s (Debian: %s)", name, pkg))
	return ""
}

// exported lists the symbols lib defines for others, each as
// "name@version" ("@@" for the default version), with its ELF type.
func exported(t *testing.T, lib string) []string {
	t.Helper()
	f, err := elf.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatalf("%s: %v", lib, err)
	}
	var out []string
	for _, s := range syms {
		if s.Section == elf.SHN_UNDEF || elf.ST_BIND(s.Info) == elf.STB_LOCAL {
			continue
		}
		sep := "@@"
		if s.HasVersion && s.VersionIndex.IsHidden() {
			sep = "@"
		}
		out = append(out, fmt.Sprintf("%s%s%s (%v)", s.Name, sep, s.Version, elf.ST_TYPE(s.Info)))
	}
	slices.Sort(out)
	return out
}

// builtLib builds rocelab's libibverbs.so.1 into a directory of the test's
// and returns its path.
func builtLib(t *testing.T) string {
	t.Helper()
	lib := filepath.Join(t.TempDir(), "libibverbs.so.1")
	testenv.BuildVerbsLib(t, lib)
	return lib
}

// TestSymbolSet: rocelab's libibverbs and librdmacm export exactly the
// system's libraries' symbols, each with its version and as default or
// hidden (compatibility) version, so that no program or library (pyverbs,
// UCX, Open MPI, perftest, qperf, libfabric, the providers) meets an
// unresolved symbol.
func TestSymbolSet(t *testing.T) {
	ours := builtLib(t)
	for _, c := range []struct{ name, pkg string }{{"libibverbs.so.1", "libibverbs1"}, {"librdmacm.so.1", "librdmacm1"}} {
		t.Run(c.name, func(t *testing.T) {
			lib := filepath.Join(filepath.Dir(ours), c.name)
			if c.name == "librdmacm.so.1" {
				testenv.RequireCMLib(t, ours)
			}
			sameSymbols(t, exported(t, systemLibNamed(t, c.name, c.pkg)), exported(t, lib))
		})
	}
}

func sameSymbols(t *testing.T, sys, ours []string) {
	t.Helper()
	var missing, extra []string
	for _, s := range sys {
		if !slices.Contains(ours, s) {
			missing = append(missing, s)
		}
	}
	for _, s := range ours {
		if !slices.Contains(sys, s) {
			extra = append(extra, s)
		}
	}
	t.Logf("%d symbols in the system's library, %d in rocelab's", len(sys), len(ours))
	if len(missing) > 0 {
		t.Errorf("rocelab's library lacks %d of the system's symbols:\n%s", len(missing), strings.Join(missing, "\n"))
	}
	if len(extra) > 0 {
		t.Errorf("rocelab's library exports %d symbols the system's does not:\n%s", len(extra), strings.Join(extra, "\n"))
	}
}

// TestPureHelpers: the helpers that need no device (rates, status and
// event strings) answer as the system's library does over their whole
// domain: one program, run against each library.
func TestPureHelpers(t *testing.T) {
	sys, ours := systemLib(t), builtLib(t)
	cc := testenv.RequireTool(t, "cc")
	prog := filepath.Join(t.TempDir(), "pure")
	// Linked against the system's library (the -dev package's
	// libibverbs.so); run against either by LD_LIBRARY_PATH.
	if out, err := exec.Command(cc, "-o", prog, "libibverbs/testdata/pure.c", "-L"+filepath.Dir(sys), "-l:libibverbs.so.1").CombinedOutput(); err != nil {
		t.Fatalf("build pure.c: %v\n%s", err, out)
	}
	run := func(libDir string) string {
		cmd := exec.Command(prog)
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+libDir)
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("pure against %s: %v\n%s", libDir, err, ee.Stderr)
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	want, got := run(filepath.Dir(sys)), run(filepath.Dir(ours))
	if want == got {
		t.Logf("%d answers the same", strings.Count(want, "\n"))
		return
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	n := 0
	for i := range min(len(w), len(g)) {
		if w[i] != g[i] && n < 20 {
			t.Errorf("system: %q, rocelab: %q", w[i], g[i])
			n++
		}
	}
	if len(w) != len(g) {
		t.Errorf("system answered %d lines, rocelab %d", len(w), len(g))
	}
}
