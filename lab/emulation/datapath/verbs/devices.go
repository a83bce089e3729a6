package verbs

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// Device is one verbs device a node serves, as a program's library sees
// it (struct rl_device).
type Device struct {
	// Name is the device's name (rocelab_gpu0); Index its place in the
	// device list (uverbsN); NIC the lab's name of the NIC (host1:gpu0).
	Name  string
	Index int
	NIC   string
	MAC   net.HardwareAddr
	// IPv4 is the NIC's back-end address (invalid if none).
	IPv4    netip.Addr
	MTU     int
	RateBps uint64
}

// GUID is the device's node GUID, from its MAC as RoCE NICs make it
// (EUI-64: ff:fe in the middle, the universal/local bit flipped).
func (d Device) GUID() [8]byte {
	m := d.MAC
	return [8]byte{m[0] ^ 2, m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]}
}

// GIDs is the device's GID table as the library lays it out: 0 and 1 the
// link-local address from the MAC (RoCE v1, v2), 2 and 3 the IPv4-mapped
// back-end address (RoCE v1, v2) when the NIC has one.
func (d Device) GIDs() []GID {
	g := d.GUID()
	var ll [16]byte
	ll[0], ll[1] = 0xfe, 0x80
	copy(ll[8:], g[:])
	out := []GID{{ll, false}, {ll, true}}
	if d.IPv4.IsValid() {
		v4 := netip.AddrFrom4(d.IPv4.As4()).As16()
		v4[10], v4[11] = 0xff, 0xff
		out = append(out, GID{v4, false}, GID{v4, true})
	}
	return out
}

// GID is one entry of a device's GID table.
type GID struct {
	Raw [16]byte
	V2  bool // RoCE v2 (UDP/IP); false: RoCE v1 (Ethernet)
}

// Devices asks the node whose verbs socket is path for its devices, as
// the library's ibv_get_device_list does.
func Devices(path string) ([]Device, error) {
	c, err := net.DialTimeout("unixpacket", path, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("verbs devices: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	req := make([]byte, hdrSize+4)
	le.PutUint32(req, opHello)
	le.PutUint32(req[8:], 4)
	le.PutUint32(req[hdrSize:], protoVersion)
	if _, err := c.Write(req); err != nil {
		return nil, fmt.Errorf("verbs devices at %s: %w", path, err)
	}
	buf := make([]byte, maxMsg)
	n, err := c.Read(buf)
	if err != nil {
		return nil, fmt.Errorf("verbs devices at %s: %w", path, err)
	}
	b := buf[:n]
	if len(b) < replySize+8 {
		return nil, fmt.Errorf("verbs devices at %s: a reply of %d bytes", path, len(b))
	}
	if e := int32(le.Uint32(b)); e != 0 {
		return nil, fmt.Errorf("verbs devices at %s: %s (errno %d)", path, cstr(b[8:replySize]), e)
	}
	b = b[replySize:]
	if v := le.Uint32(b); v != protoVersion {
		return nil, fmt.Errorf("verbs devices at %s: the node speaks protocol %d, this rocelab %d", path, v, protoVersion)
	}
	nd := int(le.Uint32(b[4:]))
	b = b[8:]
	if len(b) < nd*deviceSize {
		return nil, fmt.Errorf("verbs devices at %s: %d devices in %d bytes", path, nd, len(b))
	}
	devs := make([]Device, nd)
	for i := range devs {
		x := b[i*deviceSize:]
		d := Device{Name: cstr(x[0:64]), Index: i, NIC: cstr(x[64:128]), MAC: net.HardwareAddr(bytes.Clone(x[128:134])),
			MTU: int(le.Uint32(x[140:])), RateBps: le.Uint64(x[144:])}
		if ip := netip.AddrFrom4([4]byte(x[136:140])); !ip.IsUnspecified() {
			d.IPv4 = ip
		}
		devs[i] = d
	}
	return devs, nil
}

func cstr(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
