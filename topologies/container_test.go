package topologies

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestContainers(t *testing.T) {
	const file = `name: c
defaults:
  host:
    image: team/trainer:1
    cmd: [sleep, "1000"]
    env: {A: "1", B: two}
    binds: [data:/data:ro, /ckpt:/ckpt]
  storage: {image: team/store:2}
nodes:
  h1: {kind: host}
  h2: {kind: host, image: busybox, env: {B: three, C: "4"}, binds: [/other:/data]}
  h3: {kind: host, cmd: [sh]}
  st1: {kind: storage}
  sw: {kind: switch, role: rsw}
  be: {kind: switch, role: rtsw}
links:
  - h1:gpu0 -- be
  - h2:gpu0 -- be
  - h3:gpu0 -- be
  - h1:fe0 -- sw
  - h2:fe0 -- sw
  - h3:fe0 -- sw
  - st1 -- sw
`
	tp, err := Parse("/labs/c.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	h1 := &Container{Image: "team/trainer:1", Cmd: []string{"sleep", "1000"}, Env: []string{"A=1", "B=two"},
		Binds: []string{"/labs/data:/data:ro", "/ckpt:/ckpt"}, BindPos: []Pos{{7, 13}, {7, 28}}, Pos: Pos{4, 12}}
	want := map[string]*Container{
		"h1": h1,
		// Key by key over the defaults: its own image, env merged, its bind
		// replaces the default's of the same container path.
		"h2": {Image: "busybox", Cmd: []string{"sleep", "1000"}, Env: []string{"A=1", "B=three", "C=4"},
			Binds: []string{"/other:/data", "/ckpt:/ckpt"}, BindPos: []Pos{{11, 69}, {7, 28}}, Pos: Pos{11, 27}},
		"h3":  {Image: "team/trainer:1", Cmd: []string{"sh"}, Env: h1.Env, Binds: h1.Binds, BindPos: h1.BindPos, Pos: Pos{4, 12}},
		"st1": {Image: "team/store:2", Pos: Pos{8, 20}},
		"sw":  nil,
	}
	for name, w := range want {
		if diff := cmp.Diff(w, tp.Node(name).Container); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	imgs := tp.Images()
	if len(imgs) != 3 || imgs["team/trainer:1"].Name != "h1" || imgs["busybox"].Name != "h2" || !tp.HasContainers() {
		t.Errorf("Images() = %v", imgs)
	}
	lp, err := Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	if lp.HasContainers() {
		t.Error("laptop names images")
	}
}
