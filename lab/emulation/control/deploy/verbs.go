package deploy

import (
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/datapath/verbs"
	"github.com/rocelab/rocelab/lab/emulation/datapath/verbs/hostfs"
	"github.com/rocelab/rocelab/topologies"
)

// EnvVerbsLib names a libibverbs.so.1 to give the lab's programs instead
// of the one found beside the rocelab binary.
const EnvVerbsLib = "ROCELAB_VERBS_LIB"

// VerbsLibrary finds rocelab's libibverbs.so.1 for the binary at bin:
// $ROCELAB_VERBS_LIB, else lib/ beside the binary (make build puts it in
// bin/lib), else ../lib/rocelab (make install). "" when there is none.
func VerbsLibrary(bin string) string {
	if p := os.Getenv(EnvVerbsLib); p != "" {
		return p
	}
	dir := filepath.Dir(bin)
	for _, p := range []string{filepath.Join(dir, "lib", verbs.LibName), filepath.Join(dir, "..", "lib", "rocelab", verbs.LibName)} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// installVerbs makes the lab's verbs directory (the endpoint nodes'
// verbs sockets go there) and copies rocelab's libibverbs.so.1 into it,
// when there is one, so that `rocelab exec` can hand it to programs — in
// a docker lab, through a bind of that directory alone.
func (d *deployer) installVerbs() error {
	dir := filepath.Join(verbs.Dir(state.Dir(d.root, d.name)), "lib")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("verbs directory: %w", err)
	}
	src := VerbsLibrary(d.binary)
	if src == "" {
		return nil
	}
	if err := copyFile(src, filepath.Join(dir, verbs.LibName), 0o755); err != nil {
		return fmt.Errorf("verbs library: %w", err)
	}
	// rocelab's librdmacm.so.1, built beside it, when there is one.
	if cm := filepath.Join(filepath.Dir(src), verbs.CMLibName); fileExists(cm) {
		if err := copyFile(cm, filepath.Join(dir, verbs.CMLibName), 0o755); err != nil {
			return fmt.Errorf("rdma_cm library: %w", err)
		}
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(tmp)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}

// verbsBind is the bind that gives a user's container the lab's verbs
// directory (sockets and library) at the same path.
func (d *deployer) verbsBind() string {
	dir := verbs.Dir(state.Dir(d.root, d.name))
	return dir + ":" + dir
}

// verbsEnv is the environment that points a program in node n at its
// NICs through rocelab's libibverbs: nil for a node with no endpoint
// process, and no library path when the lab has no library.
func verbsEnv(n *Node) []string {
	if n.Kind == topologies.KindSwitch || n.Socket == "" {
		return nil
	}
	env := []string{"ROCELAB_VERBS_SOCKET=" + verbs.SocketPath(n.Socket)}
	// libfabric's verbs provider addresses UD endpoints by GID index 0
	// unless told, the link-local RoCE v1 GID, which a routed fabric does
	// not carry; the NIC's IPv4 RoCE v2 GID is index 3.
	if os.Getenv("FI_VERBS_GID_IDX") == "" {
		env = append(env, "FI_VERBS_GID_IDX=3")
	}
	lib := verbs.LibDir(n.Socket)
	if _, err := os.Stat(filepath.Join(lib, verbs.LibName)); err == nil {
		path := lib
		if old := os.Getenv("LD_LIBRARY_PATH"); old != "" && !strings.Contains(old, lib) {
			path += ":" + old
		}
		env = append(env, "LD_LIBRARY_PATH="+path)
	}
	return env
}

// verbsPathsFit checks that every endpoint node's verbs socket path fits
// sun_path, like its API socket.
func (d *deployer) verbsPathsFit() error {
	for _, n := range d.t.Nodes {
		if s := verbs.SocketPath(d.path(n.Name, ".sock")); len(s) > 107 {
			return fmt.Errorf("deploy: verbs socket path %s is longer than 107 bytes: use a shorter root or lab name", s)
		}
	}
	return nil
}

// verbsHostView returns what gives a program in node n the files RDMA
// software looks for around libibverbs — /dev/infiniband/uverbsN and
// /sys/class/infiniband for the node's devices — in a mount namespace of
// the program's own (package hostfs); nil for a node without verbs
// devices, or whose endpoint process does not answer (the library says
// so when the program calls it).
func verbsHostView(l *Lab, n *Node) func() error {
	if n.Kind == topologies.KindSwitch || n.Socket == "" {
		return nil
	}
	devs, err := verbs.Devices(verbs.SocketPath(n.Socket))
	if err != nil || len(devs) == 0 {
		return nil
	}
	ifname := map[string]string{}
	for _, pi := range n.Interfaces {
		if port, name, ok := strings.Cut(pi, "="); ok {
			ifname[port] = name
		}
	}
	hd := make([]hostfs.Device, len(devs))
	for i, d := range devs {
		_, port, _ := strings.Cut(d.NIC, ":")
		hd[i] = hostfs.Device{Name: d.Name, Index: d.Index, Netdev: ifname[port], GUID: d.GUID(), RateBps: d.RateBps, MTU: d.MTU}
		for _, g := range d.GIDs() {
			hd[i].GIDs = append(hd[i].GIDs, hostfs.GID{Raw: g.Raw, V2: g.V2})
		}
	}
	var names []hostfs.HostName
	for _, o := range l.Nodes {
		if o.Kind == topologies.KindSwitch || len(o.Addresses) == 0 {
			continue
		}
		if p, err := netip.ParsePrefix(o.Addresses[0]); err == nil {
			names = append(names, hostfs.HostName{Name: o.Name, Addr: p.Addr()})
		}
	}
	return func() error { return hostfs.Enter(hd, names...) }
}
