package deploy_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/docker"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/topologies"
)

// dockerSocket is the engine's default socket.
const dockerSocket = "/var/run/docker.sock"

// requireDocker skips t (fails it under CI) unless it runs as root and a
// Docker engine answers on dockerSocket, and returns a client for it.
func requireDocker(t *testing.T) *client.Client {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.Exclusive(t) // not beside timing tests, nor the docker package's image tests
	if _, err := os.Stat(dockerSocket); err != nil {
		testenv.Missing(t, "a Docker engine ("+dockerSocket+")")
	}
	c, err := client.NewClientWithOpts(client.WithHost("unix://"+dockerSocket), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := c.Ping(ctx); err != nil {
		testenv.Missing(t, "a Docker engine answering on "+dockerSocket+" ("+err.Error()+")")
	}
	return c
}

// containers are the names of this test process's labs' containers.
func containers(t *testing.T, c *client.Client) []string {
	t.Helper()
	list, err := c.ContainerList(t.Context(), container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", docker.LabelLab))})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ct := range list {
		if strings.HasPrefix(ct.Labels[docker.LabelLab], prefix) {
			out = append(out, ct.Labels[docker.LabelLab]+"/"+ct.Labels[docker.LabelNode])
		}
	}
	slices.Sort(out)
	return out
}

// TestDockerLaptop deploys laptop with the docker runtime: every node is a
// container, every switch process answers /health, the FE carries a ping
// from a host to the storage node, and destroy leaves the namespaces,
// interfaces and containers as they were.
func TestDockerLaptop(t *testing.T) {
	c := requireDocker(t)
	testenv.RequireTool(t, "ping")
	root := runRoot(t)
	before, beforeCt := snap(t), containers(t, c)
	tp, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := docker.New(docker.Options{Binary: binary(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	lab := labName(t, "dock")
	start := time.Now()
	l, err := deploy.Deploy(t.Context(), deploy.Options{Topology: tp, LabName: lab, Root: root, Binary: binary(t), Runtime: rt})
	if err != nil {
		deploy.Destroy(context.Background(), root, lab)
		t.Fatal(err)
	}
	t.Logf("deploy laptop (docker) in %v: %v", time.Since(start).Round(time.Millisecond), l.Timings)
	destroyed := false
	defer func() {
		if !destroyed {
			deploy.Destroy(context.Background(), root, lab)
		}
	}()
	if l.Runtime != "docker" {
		t.Errorf("runtime %q", l.Runtime)
	}
	if got := containers(t, c); len(got) != len(tp.Nodes)+len(beforeCt) {
		t.Errorf("%d containers of this test, want %d: %v", len(got), len(tp.Nodes), got)
	}
	switches := 0
	for _, n := range l.Nodes {
		if n.Container != docker.ContainerName(lab, n.Name) {
			t.Errorf("node %s: container %q", n.Name, n.Container)
		}
		if n.Kind != topologies.KindSwitch {
			continue
		}
		switches++
		cl := nodeapi.NewClient(n.Socket)
		h, err := cl.Health(t.Context())
		cl.Close()
		if err != nil || h.Status != "ok" || h.Name != n.Name {
			t.Errorf("switch %s: /health %+v, %v", n.Name, h, err)
		}
	}
	if switches == 0 {
		t.Error("no switch nodes")
	}
	ping(t, root, lab, "host1", feAddr(t, l, "st1"))

	start = time.Now()
	if _, err := deploy.Destroy(t.Context(), root, lab); err != nil {
		t.Fatal(err)
	}
	destroyed = true
	t.Logf("destroy in %v", time.Since(start).Round(time.Millisecond))
	sameSnapshot(t, before)
	if diff := cmp.Diff(beforeCt, containers(t, c)); diff != "" {
		t.Errorf("containers changed (-before +after):\n%s", diff)
	}
}

// TestDockerDestroyAllCrashed removes the containers and namespaces of a
// docker lab whose run directory is gone (a crashed CLI, a wiped /run).
func TestDockerDestroyAllCrashed(t *testing.T) {
	c := requireDocker(t)
	root := runRoot(t)
	before, beforeCt := snap(t), containers(t, c)
	tp, err := topologies.Builtin("incast")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := docker.New(docker.Options{Binary: binary(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	lab := labName(t, "dcrash")
	l, err := deploy.Deploy(t.Context(), deploy.Options{Topology: tp, LabName: lab, Root: root, Binary: binary(t), Runtime: rt})
	if err != nil {
		deploy.Destroy(context.Background(), root, lab)
		t.Fatal(err)
	}
	if err := os.RemoveAll(l.Dir); err != nil {
		t.Fatal(err)
	}
	rep, err := deploy.DestroyAll(t.Context(), root, deploy.DestroyOptions{Only: func(s string) bool { return s == lab }})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(strings.Join(rep.Removed, "\n"), "container "); n != len(tp.Nodes) {
		t.Errorf("removed %d containers, want %d: %v", n, len(tp.Nodes), rep.Removed)
	}
	sameSnapshot(t, before)
	if diff := cmp.Diff(beforeCt, containers(t, c)); diff != "" {
		t.Errorf("containers changed (-before +after):\n%s", diff)
	}
}
