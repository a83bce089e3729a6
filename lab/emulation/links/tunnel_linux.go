package links

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
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
	if err := tu.h.LinkAdd(vx); err != nil {
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
