package links

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// CreateTunnel makes t's VXLAN device: created from the underlay
// namespace (which keeps its UDP socket) straight into the node's
// namespace (IFLA_NET_NS_FD), so that it never holds a name on the
// machine itself; then IPv6, offloads and the alias are set as for a veth
// end and it is brought up. A VXLAN device has a carrier as soon as it is
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
	if t.Device != "" {
		dev, err := tu.h.LinkByName(t.Device)
		if err != nil {
			return fmt.Errorf("create %v: underlay device %s: %w", t, t.Device, err)
		}
		if need := UnderlayMTU(mtu, t.Local.Is6()); dev.Attrs().MTU < need {
			return fmt.Errorf("create %v: underlay %s has MTU %d, the link needs %d (link MTU %d + %d bytes of VXLAN): raise the underlay's MTU or lower the link's", t, t.Device, dev.Attrs().MTU, need, mtu, need-mtu)
		}
		vx.VtepDevIndex = dev.Attrs().Index
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
	if err := tn.setLink(t.End.Name, t.End.Alias, true); err != nil {
		return fmt.Errorf("create %v: alias and up: %w", t, err)
	}
	return nil
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
