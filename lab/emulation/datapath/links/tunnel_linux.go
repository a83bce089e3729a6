package links

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// CreateTunnel makes t's VXLAN device: created from the underlay
// namespace (which keeps its UDP socket) straight into the node's
// namespace (IFLA_NET_NS_FD), so that it never holds a name on the
// machine itself; then IPv6, offloads and the alias are set as for a veth
// end, Don't Fragment on its datagrams (setDF), and it is brought up.
// Before anything is made, the underlay interface (t.Device, or the one
// the route to t.Remote leaves by) must carry the link's frames whole. A VXLAN device has a carrier as soon as it is
// up, so there is nothing to wait for. If a step fails the device is
// deleted again.
func (m *Maker) CreateTunnel(t Tunnel) (err error) {
	if err := t.check(); err != nil {
		return err
	}
	tu, err := m.tools(t.Underlay)
	if err != nil {
		return fmt.Errorf("create %v: %w", t, err)
	}
	tn, err := m.tools(t.End.NetNS)
	if err != nil {
		return fmt.Errorf("create %v: %w", t, err)
	}
	mtu := t.mtu()
	vx := &netlink.Vxlan{
		LinkAttrs: netlink.LinkAttrs{Name: t.End.Name, MTU: mtu, HardwareAddr: t.End.MAC, Namespace: netlink.NsFd(tn.fd)},
		VxlanId:   int(t.VNI),
		SrcAddr:   net.IP(t.Local.AsSlice()),
		Group:     net.IP(t.Remote.AsSlice()),
		Port:      int(t.port()),
		Learning:  false,
		// The source port is one fixed value (a range of one): every
		// frame of the link takes one underlay path, in order, as a
		// cable's frames do.
		PortLow:  int(t.port()),
		PortHigh: int(t.port()),
		TTL:      64,
	}
	dev, how, err := underlayDev(tu, t)
	if err != nil {
		return fmt.Errorf("create %v: %w", t, err)
	}
	if need := UnderlayMTU(mtu, t.Local.Is6()); dev.mtu < need {
		return fmt.Errorf("create %v: underlay %s%s has MTU %d, the link needs %d (link MTU %d + %d bytes of VXLAN): raise the underlay's MTU or lower the link's", t, dev.name, how, dev.mtu, need, mtu, need-mtu)
	}
	if t.Device != "" {
		vx.VtepDevIndex = dev.index
	}
	if err := m.addTunnel(tu, tn, t, vx); err != nil {
		return fmt.Errorf("create %v: %w", t, err)
	}
	defer func() {
		if err != nil {
			if derr := Delete(t.End.NetNS, t.End.Name); derr != nil {
				err = errors.Join(err, derr)
			}
		}
	}()
	if err := m.prepare(tn, t.End, !t.KeepOffloads); err != nil {
		return fmt.Errorf("create %v: %w", t, err)
	}
	if err := tn.setDF(t.End.Name); err != nil {
		return fmt.Errorf("create %v: set DF on the tunnel's datagrams: %w", t, err)
	}
	if err := tn.setLink(t.End.Name, t.End.Alias, true); err != nil {
		return fmt.Errorf("create %v: alias and up: %w", t, err)
	}
	return nil
}

// underlay is the interface a tunnel's datagrams leave by.
type underlay struct {
	name       string
	index, mtu int
}

// underlayDev finds the interface t's datagrams leave by: t.Device, or
// the one the underlay namespace's route to t.Remote goes out of (how
// says which route; a route with an MTU of its own bounds the device's).
func underlayDev(tu *nsTools, t Tunnel) (underlay, string, error) {
	if t.Device != "" {
		dev, err := tu.h.LinkByName(t.Device)
		if err != nil {
			return underlay{}, "", fmt.Errorf("underlay device %s: %w", t.Device, err)
		}
		return underlay{dev.Attrs().Name, dev.Attrs().Index, dev.Attrs().MTU}, "", nil
	}
	rs, err := tu.h.RouteGet(net.IP(t.Remote.AsSlice()))
	if err != nil {
		return underlay{}, "", fmt.Errorf("no route to the far machine's underlay address %v: %w", t.Remote, err)
	}
	if len(rs) == 0 || rs[0].LinkIndex == 0 {
		return underlay{}, "", fmt.Errorf("the route to the far machine's underlay address %v leaves by no interface", t.Remote)
	}
	dev, err := tu.h.LinkByIndex(rs[0].LinkIndex)
	if err != nil {
		return underlay{}, "", fmt.Errorf("the route to %v: its interface %d: %w", t.Remote, rs[0].LinkIndex, err)
	}
	u := underlay{dev.Attrs().Name, dev.Attrs().Index, dev.Attrs().MTU}
	how := fmt.Sprintf(" (the route to %v leaves by it)", t.Remote)
	if r := rs[0].MTU; r > 0 && r < u.mtu {
		u.mtu = r
		how = fmt.Sprintf(" (the route to %v leaves by it, with a route MTU of its own)", t.Remote)
	}
	return u, how, nil
}

// vxlanDFSet is the kernel's VXLAN_DF_SET (enum ifla_vxlan_df).
const vxlanDFSet = 1

// setDF has the VXLAN device name (in t's namespace) set Don't Fragment
// on the datagrams it sends (IFLA_VXLAN_DF, which vishvananda/netlink's
// Vxlan does not carry): a frame that does not fit the underlay is then
// dropped and counted, never cut into IP fragments that arrive
// reassembled, slower and out of the fabric's accounting.
func (t *nsTools) setDF(name string) error {
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_ACK)
	req.AddData(nl.NewIfInfomsg(unix.AF_UNSPEC))
	req.AddData(nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(name)))
	info := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	info.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated("vxlan"))
	data := info.AddRtAttr(nl.IFLA_INFO_DATA, nil)
	data.AddRtAttr(unix.IFLA_VXLAN_DF, nl.Uint8Attr(vxlanDFSet))
	req.AddData(info)
	return t.exec(req)
}

// CreateTunnel makes one tunnel end (see Maker.CreateTunnel).
func CreateTunnel(t Tunnel) error {
	m := &Maker{}
	defer m.Close()
	return m.CreateTunnel(t)
}

// addTunnel adds vx. The kernel refuses a VXLAN device (EEXIST) whose VNI
// and UDP port another device of the underlay namespace holds; a device
// in a namespace deleted moments ago holds them until the kernel's
// asynchronous teardown of that namespace reaches it (a part deployed
// again right after its machine lost its namespaces, or a lab deployed
// right after one destroyed without removing its tunnels first). So an
// EEXIST, when the node's namespace holds no interface of that name, is
// waited out: the add is tried again, backing off, for up to
// m.TunnelWait (DefaultTunnelWait if 0); m.Waited hears how long it
// waited. Past the bound the error says what held the VNI.
func (m *Maker) addTunnel(tu, tn *nsTools, t Tunnel, vx *netlink.Vxlan) error {
	bound := m.TunnelWait
	if bound == 0 {
		bound = DefaultTunnelWait
	}
	start := time.Now()
	pause := 5 * time.Millisecond
	for tries := 1; ; tries++ {
		err := tu.h.LinkAdd(vx)
		if err == nil {
			if waited := time.Since(start); tries > 1 && m.Waited != nil {
				m.Waited(fmt.Sprintf("%v: its VNI (UDP port %d) was held by a VXLAN device of a namespace the kernel was tearing down", t, t.port()), waited)
			}
			return nil
		}
		if !errors.Is(err, unix.EEXIST) {
			return err
		}
		if _, lerr := tn.h.LinkByName(t.End.Name); lerr == nil {
			return fmt.Errorf("%w: namespace %q has an interface %s already", err, t.End.NetNS, t.End.Name)
		}
		if time.Since(start) >= bound {
			return fmt.Errorf("%w: after %v, VNI %d on UDP port %d is still held by another VXLAN device of the underlay namespace (one in a namespace the kernel has not finished tearing down, or another lab's or program's tunnel with this VNI)",
				err, time.Since(start).Round(time.Millisecond), t.VNI, t.port())
		}
		time.Sleep(pause)
		pause = min(2*pause, 500*time.Millisecond)
	}
}
