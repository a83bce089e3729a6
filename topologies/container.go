package topologies

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/distribution/reference"
)

// Container is the user's own container a host or storage node runs in
// with the docker runtime, resolved from the node's image, cmd, env and
// binds keys over defaults.host or defaults.storage. The lab's RDMA
// endpoint runs beside it, in its network namespace.
type Container struct {
	// Image is the image reference as written ("busybox:1.36",
	// "registry.example/team/loader@sha256:…"); it must be present on the
	// machine: nothing is pulled.
	Image string `json:"image"`
	// Cmd replaces the image's CMD when set.
	Cmd []string `json:"cmd,omitempty"`
	// Env is "KEY=value", sorted by key.
	Env []string `json:"env,omitempty"`
	// Binds are "HOST:CONTAINER" or "HOST:CONTAINER:ro|rw" with HOST an
	// absolute, clean path.
	Binds []string `json:"binds,omitempty"`
	// BindPos is where each of Binds was written (the node's or the
	// defaults' binds list).
	BindPos []Pos `json:"-"`
	// Pos is where the image was written (the node's key or the defaults').
	Pos Pos `json:"-"`
}

// Images returns the distinct images the topology's nodes run in, each
// with the first node (in node order) that runs it.
func (t *Topology) Images() map[string]*Node {
	out := map[string]*Node{}
	for _, n := range t.Nodes {
		if n.Container != nil && out[n.Container.Image] == nil {
			out[n.Container.Image] = n
		}
	}
	return out
}

// HasContainers reports whether any node runs in a container of its own.
func (t *Topology) HasContainers() bool { return len(t.Images()) > 0 }

var envKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// containerKeys are the NodeSpec keys of a node's container.
var containerKeys = []string{"image", "cmd", "env", "binds"}

// checkContainerSpec validates the keys of one container spec (a node's
// or a defaults block's): w says where each key was written, what names
// the owner in messages.
func (r *resolver) checkContainerSpec(w *Where, what, image string, cmd []string, env map[string]string, binds []string) {
	if _, ok := w.Keys["image"]; ok {
		if image == "" {
			r.e.add(w.at("image"), "%s: image is empty", what)
		} else if _, err := reference.ParseNormalizedNamed(image); err != nil {
			r.e.add(w.at("image"), "%s: image %q: %v", what, image, err)
		}
	}
	if _, ok := w.Keys["cmd"]; ok && len(cmd) == 0 {
		r.e.add(w.at("cmd"), "%s: cmd is an empty list (leave it out to keep the image's CMD)", what)
	}
	for i, c := range cmd {
		if c == "" && i == 0 {
			r.e.add(w.at(fmt.Sprintf("cmd.%d", i)), "%s: cmd starts with an empty program name", what)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if !envKeyRE.MatchString(k) {
			r.e.add(w.at("env."+k), "%s: bad environment variable name %q (want letters, digits and _, not starting with a digit)", what, k)
		}
	}
	seen := map[string]int{}
	for i, b := range binds {
		at := w.at(fmt.Sprintf("binds.%d", i))
		_, ctr, err := r.parseBind(b)
		if err != nil {
			r.e.add(at, "%s: bind %q: %v", what, b, err)
			continue
		}
		if j, dup := seen[ctr]; dup {
			r.e.add(at, "%s: bind %q: %s is mounted already by bind %d", what, b, ctr, j+1)
		}
		seen[ctr] = i
	}
}

// parseBind splits "HOST:CONTAINER[:ro|rw]" and returns it with HOST made
// absolute (relative to the topology file's directory) and clean.
func (r *resolver) parseBind(b string) (resolved, ctr string, err error) {
	parts := strings.Split(b, ":")
	mode := ""
	switch len(parts) {
	case 2:
	case 3:
		mode = parts[2]
		if mode != "ro" && mode != "rw" {
			return "", "", fmt.Errorf("mode %q: want ro or rw", mode)
		}
	default:
		return "", "", fmt.Errorf("want HOST:CONTAINER or HOST:CONTAINER:ro")
	}
	host, ctr := parts[0], parts[1]
	if host == "" {
		return "", "", fmt.Errorf("empty host path")
	}
	if !strings.HasPrefix(ctr, "/") {
		return "", "", fmt.Errorf("container path %q is not absolute", ctr)
	}
	if ctr = filepath.Clean(ctr); ctr == "/" {
		return "", "", fmt.Errorf("cannot mount over the container's /")
	}
	if !filepath.IsAbs(host) {
		host = filepath.Join(filepath.Dir(r.e.file), host)
		if abs, err := filepath.Abs(host); err == nil {
			host = abs
		}
	}
	resolved = filepath.Clean(host) + ":" + ctr
	if mode != "" {
		resolved += ":" + mode
	}
	return resolved, ctr, nil
}

// checkContainerDefaults validates defaults.host and defaults.storage.
func (r *resolver) checkContainerDefaults() {
	d := r.file.Defaults
	if d == nil {
		return
	}
	for kind, c := range map[string]*ContainerSpec{"host": d.Host, "storage": d.Storage} {
		if c == nil {
			continue
		}
		r.checkContainerSpec(&c.Where, "defaults."+kind, c.Image, c.Cmd, c.Env, c.Binds)
		if c.Image == "" && (len(c.Cmd) > 0 || len(c.Env) > 0 || len(c.Binds) > 0) {
			r.e.add(c.At, "defaults.%s: cmd, env and binds need an image", kind)
		}
	}
}

// resolveContainer gives host or storage node n its container, if its
// spec or the defaults of its kind name an image.
func (r *resolver) resolveContainer(n *Node, s *NodeSpec) {
	what := fmt.Sprintf("node %s", s.Name)
	r.checkContainerSpec(&s.Where, what, s.Image, s.Cmd, s.Env, s.Binds)
	var def *ContainerSpec
	if d := r.file.Defaults; d != nil {
		def = map[Kind]*ContainerSpec{KindHost: d.Host, KindStorage: d.Storage}[n.Kind]
	}
	if def == nil {
		def = &ContainerSpec{}
	}
	c := &Container{Image: cmp.Or(s.Image, def.Image), Cmd: def.Cmd, Pos: s.at("image")}
	if s.Image == "" {
		c.Pos = def.at("image")
	}
	if c.Image == "" {
		for _, k := range containerKeys[1:] {
			if _, ok := s.Keys[k]; ok {
				r.e.add(s.at(k), "%s: %s needs an image (give one here or in defaults.%s)", what, k, n.Kind)
			}
		}
		return
	}
	if s.Cmd != nil {
		c.Cmd = s.Cmd
	}
	c.Cmd = slices.Clone(c.Cmd)
	env := maps.Clone(def.Env)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, s.Env)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		c.Env = append(c.Env, k+"="+env[k])
	}
	// A node's bind replaces the default's bind of the same container path.
	byCtr := map[string]string{}
	posByCtr := map[string]Pos{}
	var order []string
	for i, b := range append(slices.Clone(def.Binds), s.Binds...) {
		res, ctr, err := r.parseBind(b)
		if err != nil {
			continue // reported by checkContainerSpec
		}
		if _, ok := byCtr[ctr]; !ok {
			order = append(order, ctr)
		}
		byCtr[ctr] = res
		if i < len(def.Binds) {
			posByCtr[ctr] = def.at(fmt.Sprintf("binds.%d", i))
		} else {
			posByCtr[ctr] = s.at(fmt.Sprintf("binds.%d", i-len(def.Binds)))
		}
	}
	for _, ctr := range order {
		c.Binds = append(c.Binds, byCtr[ctr])
		c.BindPos = append(c.BindPos, posByCtr[ctr])
	}
	n.Container = c
}
