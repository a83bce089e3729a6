package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/rocelab/rocelab/internal/testenv"
)

// makeBin builds what `make build` puts into bin/ — the three programs,
// statically, and the verbs libraries — into a temporary directory.
func makeBin(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	if err := testenv.BuildRocelabTo(filepath.Join(bin, "rocelab")); err != nil {
		t.Fatal(err)
	}
	ctl := testenv.BuildCommand(t, "rocelab-controller")
	if err := os.Rename(ctl, filepath.Join(bin, "rocelab-controller")); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("../../scripts/build-verbs-lib.sh", filepath.Join(bin, "lib", "libibverbs.so.1")).CombinedOutput()
	if err != nil {
		testenv.Missing(t, fmt.Sprintf("rocelab's verbs libraries (gcc, libibverbs-dev, librdmacm-dev): %v: %s", err, out))
	}
	return bin
}

// TestImage builds rocelab's image twice from the same files (the same
// bytes, so the same digest), then loads it into the Docker engine
// through its API and runs `rocelab --version` in it.
func TestImage(t *testing.T) {
	bin := makeBin(t)
	dir := t.TempDir()
	ref := fmt.Sprintf("rocelab-imagegen-test:%d", time.Now().UnixNano())
	a, b := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
	if err := run(bin, a, filepath.Join(dir, "oci"), ref, "test", 0); err != nil {
		t.Fatal(err)
	}
	if err := run(bin, b, "", ref, "test", 0); err != nil {
		t.Fatal(err)
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if !bytes.Equal(ab, bb) {
		t.Errorf("two builds of the same files differ: %d and %d bytes", len(ab), len(bb))
	}
	if _, err := os.Stat(filepath.Join(dir, "oci", "index.json")); err != nil {
		t.Errorf("OCI layout: %v", err)
	}
	if err := run(bin, b, "", ref, "test", 1700000000); err != nil {
		t.Fatal(err)
	}
	if bb, _ = os.ReadFile(b); bytes.Equal(ab, bb) {
		t.Error("another SOURCE_DATE_EPOCH gave the same image")
	}

	testenv.RequireRoot(t)
	c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.Ping(ctx); err != nil {
		testenv.Missing(t, "a Docker engine ("+err.Error()+")")
	}
	f, err := os.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	resp, err := c.ImageLoad(ctx, f, client.ImageLoadWithQuiet(true))
	if err != nil {
		t.Fatalf("docker load: %v", err)
	}
	var msg bytes.Buffer
	msg.ReadFrom(resp.Body)
	resp.Body.Close()
	t.Cleanup(func() { c.ImageRemove(context.Background(), ref, image.RemoveOptions{Force: true}) })
	cr, err := c.ContainerCreate(ctx, &container.Config{Image: ref, Cmd: []string{"rocelab", "--version"}},
		nil, nil, nil, "")
	if err != nil {
		t.Fatalf("create a container of the loaded image (load said %s): %v", msg.String(), err)
	}
	defer c.ContainerRemove(context.Background(), cr.ID, container.RemoveOptions{Force: true})
	if err := c.ContainerStart(ctx, cr.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	waited, errs := c.ContainerWait(ctx, cr.ID, container.WaitConditionNotRunning)
	select {
	case w := <-waited:
		if w.StatusCode != 0 {
			t.Errorf("rocelab --version exited %d", w.StatusCode)
		}
	case err := <-errs:
		t.Fatal(err)
	}
	logs, err := c.ContainerLogs(ctx, cr.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	var out, stderr bytes.Buffer
	stdcopy.StdCopy(&out, &stderr, logs)
	if !strings.HasPrefix(out.String(), "rocelab ") {
		t.Errorf("rocelab --version in the image printed %q (stderr %q)", out.String(), stderr.String())
	}
}
