package links

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	vns "github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Maker creates many veth pairs, from any number of goroutines at once.
// Per namespace it opens once what Create would open per pair: a netlink
// socket, an ethtool socket and a handle of the namespace (for the peer's
// IFLA_NET_NS_FD); the ethtool feature names, the same for every device,
// are read once. A pair costs three netlink requests (create, then alias
// and up for each end) and three ethtool ioctls per end. Ends are not waited for: WaitUp does that for every pair made,
// once. Close releases it all.
type Maker struct {
	// OwnNamespaces says the named namespaces the pairs go into are the
	// caller's own, made for them: the Maker may then set their default
	// disable_ipv6 (net.ipv6.conf.default) to 1 while it works, so that
	// ends are born without IPv6 instead of being switched off one system
	// call into the namespace at a time, and puts it back on Close. Ends
	// that keep IPv6 get it switched on. The caller's own namespace ("")
	// is never changed.
	OwnNamespaces bool
	// TunnelWait bounds how long CreateTunnel waits for a VNI that a
	// namespace being torn down still holds (0 = DefaultTunnelWait).
	TunnelWait time.Duration
	// Waited, if set, hears what CreateTunnel waited for, and how long.
	Waited func(what string, d time.Duration)

	mu    sync.Mutex
	ns    map[string]*nsTools
	names []string // feature names, by bit (nil until read)
	made  []Veth
}

// nsTools are a Maker's tools for one namespace.
type nsTools struct {
	once sync.Once
	err  error
	fd   vns.NsHandle
	sock *nl.SocketHandle
	h    *netlink.Handle
	eth  *ethtool
	// noIPv6 is true when new interfaces are born with IPv6 disabled;
	// restore is the default to put back on Close ("" = leave it).
	noIPv6  bool
	restore string
}

// tools returns the tools of namespace ns, opening them on first use.
func (m *Maker) tools(ns string) (*nsTools, error) {
	m.mu.Lock()
	if m.ns == nil {
		m.ns = map[string]*nsTools{}
	}
	t, ok := m.ns[ns]
	if !ok {
		t = &nsTools{fd: vns.None()}
		m.ns[ns] = t
	}
	m.mu.Unlock()
	t.once.Do(func() { t.err = m.open(ns, t) })
	return t, t.err
}

const ipv6Default = "/proc/sys/net/ipv6/conf/default/disable_ipv6"

func (m *Maker) open(ns string, t *nsTools) error {
	var err error
	if t.fd, err = netns.Open(ns); err != nil {
		return err
	}
	if t.h, err = netlink.NewHandleAt(t.fd); err != nil {
		return fmt.Errorf("netlink handle in netns %q: %w", ns, err)
	}
	cur, err := vns.Get()
	if err != nil {
		return fmt.Errorf("get current netns: %w", err)
	}
	defer cur.Close()
	s, err := nl.GetNetlinkSocketAt(t.fd, cur, unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("netlink socket in netns %q: %w", ns, err)
	}
	t.sock = &nl.SocketHandle{Socket: s}
	own := m.OwnNamespaces && ns != ""
	// One trip into the namespace: the ethtool socket, and IPv6's default.
	return netns.Do(ns, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("ethtool socket in netns %q: %w", ns, err)
		}
		t.eth = &ethtool{fd: fd}
		b, err := os.ReadFile(ipv6Default)
		if errors.Is(err, os.ErrNotExist) {
			t.noIPv6 = true // no IPv6 in this kernel: nothing to switch off
			return nil
		}
		if err != nil || !own {
			return nil
		}
		if v := string(bytes.TrimSpace(b)); v != "1" {
			if err := os.WriteFile(ipv6Default, []byte("1\n"), 0o644); err != nil {
				return nil // per end, then
			}
			t.restore = v
		}
		t.noIPv6 = true
		return nil
	})
}

// featureNames returns the ethtool feature names, reading them from ifname
// the first time.
func (m *Maker) featureNames(e *ethtool, ifname string) ([]string, error) {
	m.mu.Lock()
	names := m.names
	m.mu.Unlock()
	if names != nil {
		return names, nil
	}
	names, err := e.featureNames(ifname)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.names = names
	m.mu.Unlock()
	return names, nil
}

// Create makes the veth pair v as the package's Create does, except that
// it returns before the ends are operationally up (WaitUp). If a step
// fails, the pair is deleted again.
func (m *Maker) Create(v Veth) (err error) {
	if err := v.check(); err != nil {
		return err
	}
	mtu := v.MTU
	if mtu == 0 {
		mtu = DefaultMTU
	}
	ta, err := m.tools(v.A.NetNS)
	if err != nil {
		return fmt.Errorf("create %v: %w", v, err)
	}
	tb, err := m.tools(v.B.NetNS)
	if err != nil {
		return fmt.Errorf("create %v: %w", v, err)
	}
	if err := ta.addVeth(v, mtu, tb.fd); err != nil {
		return fmt.Errorf("create %v: %w", v, err)
	}
	defer func() {
		if err != nil {
			if derr := Delete(v.A.NetNS, v.A.Name); derr != nil {
				err = errors.Join(err, derr)
			}
		}
	}()
	for _, e := range []struct {
		t   *nsTools
		end End
	}{{ta, v.A}, {tb, v.B}} {
		if err := m.prepare(e.t, e.end, !v.KeepOffloads); err != nil {
			return fmt.Errorf("create %v: %w", v, err)
		}
		if err := e.t.setLink(e.end.Name, e.end.Alias, true); err != nil {
			return fmt.Errorf("create %v: alias and up on %s: %w", v, e.end.Name, err)
		}
	}
	m.mu.Lock()
	m.made = append(m.made, v)
	m.mu.Unlock()
	return nil
}

// prepare sets end e's IPv6 and offloads, before it goes up.
func (m *Maker) prepare(t *nsTools, e End, offloadsOff bool) error {
	switch {
	case e.NoIPv6 && !t.noIPv6:
		if err := DisableIPv6(e.NetNS, e.Name); err != nil {
			return err
		}
	case !e.NoIPv6 && t.restore != "":
		// Born without IPv6 by the Maker's doing: give it back.
		if err := setIPv6(e.NetNS, e.Name, false); err != nil {
			return err
		}
	}
	if !offloadsOff {
		return nil
	}
	names, err := m.featureNames(t.eth, e.Name)
	if err != nil {
		return err
	}
	want := make(map[string]bool, len(Offloads))
	for _, n := range Offloads {
		want[n] = false
	}
	return t.eth.setFeatures(e.Name, names, want)
}

// addVeth sends the RTM_NEWLINK that creates v: end A in t's namespace,
// the peer straight into the namespace peerNS (the kernel takes no alias
// at creation: setLink sets them).
func (t *nsTools) addVeth(v Veth, mtu int, peerNS vns.NsHandle) error {
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK)
	req.AddData(nl.NewIfInfomsg(unix.AF_UNSPEC))
	req.AddData(nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(v.A.Name)))
	req.AddData(nl.NewRtAttr(unix.IFLA_MTU, nl.Uint32Attr(uint32(mtu))))
	if v.A.MAC != nil {
		req.AddData(nl.NewRtAttr(unix.IFLA_ADDRESS, []byte(v.A.MAC)))
	}
	info := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	info.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated("veth"))
	data := info.AddRtAttr(nl.IFLA_INFO_DATA, nil)
	peer := data.AddRtAttr(nl.VETH_INFO_PEER, nil)
	nl.NewIfInfomsgChild(peer, unix.AF_UNSPEC)
	peer.AddRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(v.B.Name))
	peer.AddRtAttr(unix.IFLA_MTU, nl.Uint32Attr(uint32(mtu)))
	if v.B.MAC != nil {
		peer.AddRtAttr(unix.IFLA_ADDRESS, []byte(v.B.MAC))
	}
	peer.AddRtAttr(unix.IFLA_NET_NS_FD, nl.Uint32Attr(uint32(peerNS)))
	req.AddData(info)
	return t.exec(req)
}

// setLink sets the alias (if not "") of interface name, and brings it up
// if up, in one RTM_NEWLINK found by name.
func (t *nsTools) setLink(name, alias string, up bool) error {
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	if up {
		msg.Change, msg.Flags = unix.IFF_UP, unix.IFF_UP
	}
	req.AddData(msg)
	req.AddData(nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(name)))
	if alias != "" {
		req.AddData(nl.NewRtAttr(unix.IFLA_IFALIAS, []byte(alias)))
	}
	return t.exec(req)
}

func (t *nsTools) exec(req *nl.NetlinkRequest) error {
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: t.sock}
	_, err := req.Execute(unix.NETLINK_ROUTE, 0)
	return err
}

// WaitUp waits until every pair Create made carries frames, or timeout
// passes. An end has no queueing discipline, and drops every frame sent,
// until the kernel attaches one when it sees the carrier: for the A end,
// brought up first, that is the link watcher's work, done when it reports
// the end operationally up; the B end, up second, has the carrier when it
// opens and gets its discipline there and then, so its carrier flag
// (IFF_LOWER_UP) is enough. (Its operational state follows from the link
// watcher, which defers an event it does not deem urgent by up to a
// second after its last run: a B end whose ifindex equals its peer's, as
// happens between young namespaces, waited that long for nothing.) It
// lists each namespace's links once a round.
func (m *Maker) WaitUp(timeout time.Duration) error {
	m.mu.Lock()
	// want: namespace → end name → whether the carrier alone will do.
	want := map[string]map[string]bool{}
	for _, v := range m.made {
		for i, e := range []End{v.A, v.B} {
			if want[e.NetNS] == nil {
				want[e.NetNS] = map[string]bool{}
			}
			want[e.NetNS][e.Name] = i == 1
		}
	}
	m.mu.Unlock()
	deadline := time.Now().Add(timeout)
	for sleep := 100 * time.Microsecond; ; sleep = min(2*sleep, 20*time.Millisecond) {
		var late []string
		for ns, names := range want {
			t, err := m.tools(ns)
			if err != nil {
				return err
			}
			ls, err := t.h.LinkList()
			if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
				return fmt.Errorf("list links in netns %q: %w", ns, err)
			}
			for _, l := range ls {
				a := l.Attrs()
				carrier, ok := names[a.Name]
				if ok && (a.OperState == netlink.OperUp || carrier && a.RawFlags&unix.IFF_LOWER_UP != 0) {
					delete(names, a.Name)
				}
			}
			if len(names) == 0 {
				delete(want, ns)
			}
			for n := range names {
				late = append(late, nsLabel(ns)+"/"+n)
			}
		}
		if len(want) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			if len(late) > 5 {
				late = append(late[:5], fmt.Sprintf("and %d more", len(late)-5))
			}
			return fmt.Errorf("not up after %v: %s", timeout, strings.Join(late, ", "))
		}
		time.Sleep(sleep)
	}
}

// Close puts back the namespaces' IPv6 defaults and closes every socket
// and handle.
func (m *Maker) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for ns, t := range m.ns {
		if t.restore != "" && netns.Exists(ns) {
			err := netns.Do(ns, func() error { return os.WriteFile(ipv6Default, []byte(t.restore+"\n"), 0o644) })
			if err != nil {
				errs = append(errs, fmt.Errorf("restore IPv6 default in netns %s: %w", ns, err))
			}
		}
		if t.eth != nil {
			t.eth.Close()
		}
		if t.sock != nil {
			t.sock.Close()
		}
		if t.h != nil {
			t.h.Close()
		}
		if t.fd.IsOpen() {
			t.fd.Close()
		}
	}
	m.ns = nil
	return errors.Join(errs...)
}
