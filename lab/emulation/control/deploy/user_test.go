package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/docker"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/topologies"
)

const userTopo = `name: u
addressing: {ipv6: true}
defaults:
  storage: {image: "team/store:1"}
nodes:
  h1: {kind: host}
  h2: {kind: host, frontend: false, image: "team/trainer:2"}
  st1: {kind: storage}
  be: {kind: switch, role: rtsw}
  fe: {kind: switch, role: rsw}
links:
  - h1:gpu0 -- be
  - h2:gpu0 -- be
  - h1:fe0 -- fe
  - st1 -- fe
`

func TestUserContainerPlan(t *testing.T) {
	tp, err := topologies.Parse("u.yaml", []byte(userTopo))
	if err != nil {
		t.Fatal(err)
	}
	// Images refuse every runtime but docker, naming where the first was written.
	err = checkRuntimeFits(tp, &netns.Runtime{})
	if !errors.Is(err, ErrNeedsDocker) || !strings.HasPrefix(err.Error(), "u.yaml:7:45: node h2 runs in image team/trainer:2") {
		t.Errorf("netns: %v", err)
	}
	if err := checkRuntimeFits(tp, &docker.Runtime{}); err != nil {
		t.Errorf("docker: %v", err)
	}
	lp, _ := topologies.Builtin("laptop")
	if err := checkRuntimeFits(lp, &netns.Runtime{}); err != nil {
		t.Errorf("laptop with netns: %v", err)
	}

	// /etc/hosts: every host and storage node with an FE address (h2 has
	// none), IPv4 and IPv6; switches are not named.
	d := &deployer{t: tp}
	u := d.userContainer(tp.Node("st1"))
	want := []string{"h1:198.19.0.1", "h1:2001:2:0:1::1", "st1:198.19.0.3", "st1:2001:2:0:1::3"}
	if diff := cmp.Diff(want, u.Hosts); diff != "" || u.Image != "team/store:1" || u.Hostname != "st1" {
		t.Errorf("st1: image %q hostname %q, hosts (-want +got):\n%s", u.Image, u.Hostname, diff)
	}
	if !runsProcess(tp.Node("h2")) || runsProcess(tp.Node("st1")) || !runsProcess(tp.Node("fe")) {
		t.Error("runsProcess: want h2 and fe, not st1")
	}

	// The table shows an IMAGE column only when some node has one.
	var b bytes.Buffer
	WriteTable(&b, []Node{{Name: "h1", Image: "team/trainer:2"}, {Name: "sw"}}, false)
	if lines := strings.Split(b.String(), "\n"); !strings.HasSuffix(strings.TrimSpace(lines[0]), "IMAGE") ||
		!strings.HasSuffix(strings.TrimSpace(lines[1]), "team/trainer:2") || !strings.HasSuffix(strings.TrimSpace(lines[2]), "-") {
		t.Errorf("table:\n%s", b.String())
	}
	b.Reset()
	WriteTable(&b, []Node{{Name: "sw"}}, false)
	if strings.Contains(b.String(), "IMAGE") {
		t.Errorf("table without images has an IMAGE column:\n%s", b.String())
	}
}

// TestBindSourcesMissing: a bind whose host path does not exist is named
// with the FILE:LINE:COL it was written at (the node's own list or the
// defaults'), once per path.
func TestBindSourcesMissing(t *testing.T) {
	dir := t.TempDir()
	file := `name: b
defaults:
  host: {image: team/trainer:1, binds: [` + dir + `:/ok, /no/such/ckpt:/ckpt]}
nodes:
  h1: {kind: host, frontend: false}
  h2: {kind: host, frontend: false, binds: [/no/such/data:/data]}
  be: {kind: switch, role: rtsw}
links:
  - h1:gpu0 -- be
  - h2:gpu0 -- be
`
	tp, err := topologies.Parse("b.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	err = checkBindSources(tp)
	col := len("  host: {image: team/trainer:1, binds: [") + 1 + len(dir) + len(":/ok, ")
	for _, want := range []string{
		fmt.Sprintf("b.yaml:3:%d: node h1: bind source /no/such/ckpt", col),
		"b.yaml:6:45: node h2: bind source /no/such/data",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
	if err != nil && strings.Count(err.Error(), "bind source /no/such/ckpt") != 1 {
		t.Errorf("a missing path named more than once: %v", err)
	}
}
