package links

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/runtime/netns"
	"github.com/vishvananda/netlink"
)

// Create makes the veth pair v: end A is created in A's namespace with its
// peer placed directly in B's (IFLA_NET_NS_FD), so neither end ever holds
// a name in the root namespace. Both ends get their MAC, the MTU, their
// alias, offloads off, and are brought up. If any step fails, the pair is
// deleted again and the error returned.
func Create(v Veth) (err error) {
	if err := v.check(); err != nil {
		return err
	}
	mtu := v.MTU
	if mtu == 0 {
		mtu = DefaultMTU
	}
	ha, err := netns.Handle(v.A.NetNS)
	if err != nil {
		return fmt.Errorf("create %v: %w", v, err)
	}
	defer ha.Close()
	nsB, err := netns.Open(v.B.NetNS)
	if err != nil {
		return fmt.Errorf("create %v: %w", v, err)
	}
	defer nsB.Close()

	la := netlink.NewLinkAttrs()
	la.Name, la.MTU, la.HardwareAddr = v.A.Name, mtu, v.A.MAC
	veth := &netlink.Veth{
		LinkAttrs:        la,
		PeerName:         v.B.Name,
		PeerHardwareAddr: v.B.MAC,
		PeerNamespace:    netlink.NsFd(nsB),
		PeerMTU:          uint32(mtu),
	}
	if err := ha.LinkAdd(veth); err != nil {
		return fmt.Errorf("create %v: %w", v, err)
	}
	defer func() {
		if err != nil {
			if derr := Delete(v.A.NetNS, v.A.Name); derr != nil {
				err = errors.Join(err, derr)
			}
		}
	}()
	hb, err := netns.Handle(v.B.NetNS)
	if err != nil {
		return fmt.Errorf("create %v: %w", v, err)
	}
	defer hb.Close()
	for _, e := range []struct {
		h   *netlink.Handle
		end End
	}{{ha, v.A}, {hb, v.B}} {
		if err := setup(e.h, e.end, !v.KeepOffloads); err != nil {
			return fmt.Errorf("create %v: %w", v, err)
		}
	}
	// Until the kernel's link watcher has seen the carrier, the ends have
	// no queueing discipline attached and every frame sent is dropped:
	// wait for both to be operationally up.
	for _, e := range []struct {
		h    *netlink.Handle
		name string
	}{{ha, v.A.Name}, {hb, v.B.Name}} {
		if err := waitOperUp(e.h, e.name, 3*time.Second); err != nil {
			return fmt.Errorf("create %v: %w", v, err)
		}
	}
	return nil
}

// waitOperUp polls until interface name reports operstate up.
func waitOperUp(h *netlink.Handle, name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for sleep := 100 * time.Microsecond; ; sleep = min(2*sleep, 20*time.Millisecond) {
		l, err := h.LinkByName(name)
		if err != nil {
			return fmt.Errorf("find %s: %w", name, err)
		}
		if l.Attrs().OperState == netlink.OperUp {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is not up after %v (operstate %v)", name, timeout, l.Attrs().OperState)
		}
		time.Sleep(sleep)
	}
}

func setup(h *netlink.Handle, e End, offloadsOff bool) error {
	l, err := h.LinkByName(e.Name)
	if err != nil {
		return fmt.Errorf("find %s: %w", e.Name, err)
	}
	if e.Alias != "" {
		if err := h.LinkSetAlias(l, e.Alias); err != nil {
			return fmt.Errorf("set alias of %s: %w", e.Name, err)
		}
	}
	if e.NoIPv6 {
		if err := DisableIPv6(e.NetNS, e.Name); err != nil {
			return err
		}
	}
	if offloadsOff {
		if err := DisableOffloads(e.NetNS, e.Name); err != nil {
			return err
		}
	}
	if err := h.LinkSetUp(l); err != nil {
		return fmt.Errorf("bring %s up: %w", e.Name, err)
	}
	return nil
}

// Delete removes the interface name from namespace ns (for a veth, both
// ends go). A missing interface or namespace is not an error.
func Delete(ns, name string) error {
	if ns != "" && !netns.Exists(ns) {
		return nil
	}
	h, err := netns.Handle(ns)
	if err != nil {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	defer h.Close()
	l, err := h.LinkByName(name)
	var nf netlink.LinkNotFoundError
	if errors.As(err, &nf) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	if err := h.LinkDel(l); err != nil {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	return nil
}

// DisableIPv6 turns IPv6 off on ifname in namespace ns (the sysctl
// net.ipv6.conf.IF.disable_ipv6, written from inside the namespace).
// A kernel without IPv6 has nothing to turn off.
func DisableIPv6(ns, ifname string) error {
	err := netns.Do(ns, func() error {
		p := "/proc/sys/net/ipv6/conf/" + ifname + "/disable_ipv6"
		if _, err := os.Stat("/proc/sys/net/ipv6"); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return os.WriteFile(p, []byte("1\n"), 0o644)
	})
	if err != nil {
		return fmt.Errorf("disable IPv6 on %s: %w", ifname, err)
	}
	return nil
}

// Tagged is an interface found with an alias.
type Tagged struct {
	NetNS, Name, Alias string
}

// ListTagged returns the interfaces of namespace ns whose alias satisfies
// match.
func ListTagged(ns string, match func(alias string) bool) ([]Tagged, error) {
	h, err := netns.Handle(ns)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	ls, err := h.LinkList()
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return nil, fmt.Errorf("list links in netns %q: %w", ns, err)
	}
	var out []Tagged
	for _, l := range ls {
		a := l.Attrs()
		if a.Alias != "" && match(a.Alias) {
			out = append(out, Tagged{NetNS: ns, Name: a.Name, Alias: a.Alias})
		}
	}
	return out, nil
}
