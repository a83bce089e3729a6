package docker

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/internal/testenv"
)

// goBuild builds pkg with CGO_ENABLED=0 into dir/name.
func goBuild(t testing.TB, pkg, dir, name string) string {
	t.Helper()
	gobin := testenv.RequireTool(t, "go")
	out := filepath.Join(dir, name)
	cmd := exec.Command(gobin, "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

var sleeperOnce struct {
	sync.Mutex
	path string
}

// sleeper returns the static test node binary (testdata/sleeper), built
// once per test process.
func sleeper(t testing.TB) string {
	t.Helper()
	sleeperOnce.Lock()
	defer sleeperOnce.Unlock()
	if sleeperOnce.path == "" {
		dir, err := os.MkdirTemp("", "rocelab-docker-test-")
		if err != nil {
			t.Fatal(err)
		}
		sleeperOnce.path = goBuild(t, "./testdata/sleeper", dir, "sleeper")
	}
	return sleeperOnce.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sleeperOnce.path != "" {
		os.RemoveAll(filepath.Dir(sleeperOnce.path))
	}
	os.Exit(code)
}

func TestCheckStatic(t *testing.T) {
	if err := CheckStatic(sleeper(t)); err != nil {
		t.Errorf("static test binary: %v", err)
	}
	text := filepath.Join(t.TempDir(), "script")
	os.WriteFile(text, []byte("#!/bin/sh\n"), 0o755)
	if err := CheckStatic(text); err == nil {
		t.Error("a shell script passed as a static binary")
	}
	dyn := testenv.RequireTool(t, "sh") // a dynamically linked binary
	err := CheckStatic(dyn)
	if err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("CheckStatic(%s) = %v, want an error that tells how to build a static binary", dyn, err)
	}
	r, err := New(Options{Binary: dyn})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.EnsureImage(t.Context()); err == nil {
		t.Error("EnsureImage accepted a dynamic binary")
	}
}

func TestBuildContext(t *testing.T) {
	bin := sleeper(t)
	sum, size, err := fileSum(bin)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := writeContext(&a, bin, sum, size); err != nil {
		t.Fatal(err)
	}
	if err := writeContext(&b, bin, sum, size); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two build contexts of the same binary differ")
	}
	type entry struct {
		Name string
		Mode int64
		Size int64
	}
	var got []entry
	tr := tar.NewReader(&a)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, entry{h.Name, h.Mode, h.Size})
		if h.Name == "Dockerfile" {
			df, _ := io.ReadAll(tr)
			if !strings.HasPrefix(string(df), "FROM scratch\n") || !strings.Contains(string(df), "COPY rocelab /rocelab") {
				t.Errorf("Dockerfile:\n%s", df)
			}
		}
	}
	want := []entry{{"Dockerfile", 0o644, int64(len(dockerfile))}, {"rocelab", 0o755, size}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("context entries (-want +got):\n%s", diff)
	}

	// The tag follows the content: another binary, another tag.
	other := filepath.Join(t.TempDir(), "other")
	data, _ := os.ReadFile(bin)
	os.WriteFile(other, append(data, 0), 0o755)
	osum, osize, err := fileSum(other)
	if err != nil {
		t.Fatal(err)
	}
	if imageRef(imageHash(sum)) != imageRef(imageHash(sum)) || imageRef(imageHash(sum)) == imageRef(imageHash(osum)) {
		t.Error("image tags do not follow the binary's content")
	}
	// A binary that changed after it was hashed is refused.
	if err := writeContext(io.Discard, other, sum, osize); err == nil {
		t.Error("writeContext accepted a binary that does not match its hash")
	}
}
