package links

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/vishvananda/netlink"
)

// Create makes the veth pair v: end A is created in A's namespace with its
// peer placed directly in B's (IFLA_NET_NS_FD), so neither end ever holds
// a name in the root namespace. Both ends get their MAC, the MTU, their
// alias, offloads off, and are brought up; Create returns once both are
// operationally up. If any step fails, the pair is deleted again and the
// error returned. A Maker creates many pairs at a lower cost each.
func Create(v Veth) error {
	m := &Maker{}
	defer m.Close()
	if err := m.Create(v); err != nil {
		return err
	}
	// Until the kernel's link watcher has seen the carrier, the ends have
	// no queueing discipline attached and every frame sent is dropped.
	if err := m.WaitUp(3 * time.Second); err != nil {
		return errors.Join(fmt.Errorf("create %v: %w", v, err), Delete(v.A.NetNS, v.A.Name))
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
func DisableIPv6(ns, ifname string) error { return setIPv6(ns, ifname, true) }

// setIPv6 writes net.ipv6.conf.IF.disable_ipv6 of ifname in ns.
func setIPv6(ns, ifname string, disable bool) error {
	v, what := "0\n", "enable"
	if disable {
		v, what = "1\n", "disable"
	}
	err := netns.Do(ns, func() error {
		p := "/proc/sys/net/ipv6/conf/" + ifname + "/disable_ipv6"
		if _, err := os.Stat("/proc/sys/net/ipv6"); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return os.WriteFile(p, []byte(v), 0o644)
	})
	if err != nil {
		return fmt.Errorf("%s IPv6 on %s: %w", what, ifname, err)
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
