package ociimage

import (
	"archive/tar"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLayer(t *testing.T) {
	src := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(src, []byte("#!"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := Spec{Layers: [][]File{{
		{Path: "/usr/local/bin/prog", Src: src, Mode: 0o755},
		{Path: "/etc/passwd", Data: []byte("root:x:0:0::/:/x\n")},
		{Path: "/tmp", Dir: true, Mode: 0o777 | fs.ModeSticky},
		{Path: "/var/run", Link: "../run"},
	}}}
	img, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d, %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var got []string
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(Epoch) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" {
			t.Errorf("%s: time %v, owner %d:%d %q", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname)
		}
		got = append(got, h.Name+" "+fs.FileMode(h.Mode).String()+" "+h.Linkname)
	}
	want := []string{
		"etc/ -rwxr-xr-x ", "etc/passwd -rw-r--r-- ", "tmp/ -rwxrwxrwx ",
		"usr/ -rwxr-xr-x ", "usr/local/ -rwxr-xr-x ", "usr/local/bin/ -rwxr-xr-x ", "usr/local/bin/prog -rwxr-xr-x ",
		"var/ -rwxr-xr-x ", "var/run -rwxrwxrwx ../run",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("entries (-want +got):\n%s", d)
	}
	cf, _ := img.ConfigFile()
	if !cf.Created.Time.Equal(Epoch) {
		t.Errorf("created %v", cf.Created)
	}
	d1, _ := img.Digest()
	s.Time = Epoch.Add(time.Second)
	img2, _ := Build(s)
	if d2, _ := img2.Digest(); d1 == d2 {
		t.Error("another time, the same digest")
	}
}

func TestLayerRefuses(t *testing.T) {
	for _, files := range [][]File{
		{{Path: "/"}},
		{{Path: "/a", Data: []byte("x")}, {Path: "a", Data: []byte("y")}},
	} {
		if _, err := Build(Spec{Layers: [][]File{files}}); err == nil {
			t.Errorf("%v: no error", files)
		}
	}
}

// TestRocelabNeedsStatic: a program that needs a dynamic loader is
// refused; missing verbs libraries are named, the spec still made.
func TestRocelabNeedsStatic(t *testing.T) {
	bin := t.TempDir()
	dyn := "/bin/true"        // Debian's coreutils: dynamically linked
	exe, _ := os.Executable() // a test binary: static when CGO_ENABLED=0
	for _, p := range Programs {
		if err := os.Symlink(dyn, filepath.Join(bin, p)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Rocelab(bin, "v"); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		if static(dyn) == nil {
			t.Skipf("%s is static here", dyn)
		}
		t.Fatalf("Rocelab of dynamic programs: %v", err)
	}
	if static(exe) != nil {
		t.Skipf("the test binary %s is not static (CGO_ENABLED=1?)", exe)
	}
	for _, p := range Programs {
		os.Remove(filepath.Join(bin, p))
		if err := os.Symlink(exe, filepath.Join(bin, p)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Rocelab(bin, "v")
	if !errors.Is(err, ErrNoVerbsLib) || len(s.Layers) != 2 || len(s.Layers[1]) != len(Programs) {
		t.Errorf("without bin/lib: %v, %d layers", err, len(s.Layers))
	}
}
