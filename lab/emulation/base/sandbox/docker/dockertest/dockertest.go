// Package dockertest builds the small user images that tests of user
// containers deploy, locally through the Docker Engine API: no registry,
// no network, no docker command.
package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"
	"github.com/rocelab/rocelab/internal/testenv"
)

// BusyboxRepo is the repository of the test image; its tag is a content
// hash, so a run reuses the image an earlier run built.
const BusyboxRepo = "rocelab-test/busybox"

// busyboxDockerfile makes the image: FROM scratch, busybox and one
// symbolic link per applet under /bin, a shell as its command.
const busyboxDockerfile = "FROM scratch\nCOPY . /\nENV PATH=/bin\nCMD [\"/bin/sh\"]\n"

// Busybox returns the reference of an image that holds the host's static
// busybox (Debian's busybox-static: /bin/busybox) with a link per applet
// in /bin — sh, ping, wget, httpd, nc, … — building it unless it exists.
// It skips t (fails it under CI) when busybox is not installed, and fails
// it when busybox is not static.
func Busybox(t testing.TB, c client.APIClient) string {
	t.Helper()
	path := testenv.RequireTool(t, "busybox")
	if static, err := isStatic(path); err != nil || !static {
		t.Fatalf("busybox %s is not a static executable (%v): install busybox-static", path, err)
	}
	bin, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, "--list").Output()
	if err != nil {
		t.Fatalf("busybox --list: %v", err)
	}
	applets := strings.Fields(string(out))
	h := sha256.New()
	io.WriteString(h, busyboxDockerfile)
	h.Write(bin)
	io.WriteString(h, strings.Join(applets, " "))
	ref := BusyboxRepo + ":" + hex.EncodeToString(h.Sum(nil))[:16]
	ensureImage(t, c, ref, func(add func(*tar.Header, []byte)) {
		add(&tar.Header{Name: "Dockerfile", Mode: 0o644, Typeflag: tar.TypeReg}, []byte(busyboxDockerfile))
		add(&tar.Header{Name: "bin/", Mode: 0o755, Typeflag: tar.TypeDir}, nil)
		add(&tar.Header{Name: "bin/busybox", Mode: 0o755, Typeflag: tar.TypeReg}, bin)
		for _, a := range applets {
			if a != "busybox" && !strings.Contains(a, "/") {
				add(&tar.Header{Name: "bin/" + a, Linkname: "busybox", Mode: 0o777, Typeflag: tar.TypeSymlink}, nil)
			}
		}
	})
	return ref
}

// ensureImage builds the image ref unless the engine has it, from the
// build context that files writes: add puts one entry in it (a
// Dockerfile and the files it copies).
func ensureImage(t testing.TB, c client.APIClient, ref string, files func(add func(hdr *tar.Header, body []byte))) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.ImageInspect(ctx, ref); err == nil {
		return
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	files(func(hdr *tar.Header, body []byte) {
		hdr.ModTime, hdr.Size = time.Unix(0, 0), int64(len(body))
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
	})
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	buildImage(t, ctx, c, ref, &buf)
}

// buildImage builds the image ref from the tar context ctxTar (a Dockerfile and
// the files it copies), without a network, through the engine's API.
func buildImage(t testing.TB, ctx context.Context, c client.APIClient, ref string, ctxTar io.Reader) {
	t.Helper()
	resp, err := c.ImageBuild(ctx, ctxTar, build.ImageBuildOptions{
		Tags: []string{ref}, Dockerfile: "Dockerfile", Remove: true, ForceRemove: true,
		NetworkMode: "none", Version: build.BuilderV1,
	})
	if err != nil {
		t.Fatalf("build %s: %v", ref, err)
	}
	defer resp.Body.Close()
	var log bytes.Buffer
	if err := jsonmessage.DisplayJSONMessagesStream(resp.Body, &log, 0, false, nil); err != nil {
		t.Fatalf("build %s: %v\n%s", ref, err, log.Bytes())
	}
}

// isStatic reports whether path is an ELF executable without a program
// interpreter. (Package docker's CheckStatic says the same, but its tests
// import this package.)
func isStatic(path string) (bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false, nil
		}
	}
	return true, nil
}

// WithFiles returns the reference of an image that is base plus the
// host's files at the same paths (their contents, links followed), and
// the shared libraries the executables among them load — all but those
// whose base name is in skip — building it unless it exists. Tests use
// it to put Debian's programs (ibv_rc_pingpong) into a user image.
func WithFiles(t testing.TB, c client.APIClient, base string, files, skip []string) string {
	t.Helper()
	paths := map[string]bool{}
	for _, f := range files {
		paths[f] = true
		out, err := exec.Command("ldd", f).Output()
		if err != nil {
			t.Fatalf("ldd %s: %v", f, err)
		}
		for _, l := range strings.Split(string(out), "\n") {
			for _, w := range strings.Fields(l) {
				if strings.HasPrefix(w, "/") && !slices.Contains(skip, filepath.Base(w)) {
					paths[w] = true
				}
			}
		}
	}
	names := slices.Sorted(maps.Keys(paths))
	dockerfile := "FROM " + base + "\nCOPY . /\nENV PATH=/usr/local/bin:/usr/bin:/bin\n"
	h := sha256.New()
	io.WriteString(h, dockerfile)
	bodies := map[string][]byte{}
	for _, p := range names {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		bodies[p] = b
		io.WriteString(h, p)
		h.Write(b)
	}
	ref := strings.SplitN(base, ":", 2)[0] + "-files:" + hex.EncodeToString(h.Sum(nil))[:16]
	ensureImage(t, c, ref, func(add func(*tar.Header, []byte)) {
		add(&tar.Header{Name: "Dockerfile", Mode: 0o644, Typeflag: tar.TypeReg}, []byte(dockerfile))
		for _, p := range names {
			add(&tar.Header{Name: strings.TrimPrefix(p, "/"), Mode: 0o755, Typeflag: tar.TypeReg}, bodies[p])
		}
	})
	return ref
}
