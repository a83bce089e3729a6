// Package hostfs gives a program on a lab host what RDMA software looks
// for around libibverbs, since the machine has no RDMA stack: the
// character devices /dev/infiniband/uverbsN (UCX keeps a device only if
// its node exists and opens for reading and writing) and the sysfs files
// of /sys/class/infiniband and /sys/class/infiniband_verbs (GID types and
// the net device behind each GID, port state and rate, node GUID), made
// for the host's own devices.
//
// They live in a mount namespace of the program's own (Enter), never on
// the machine: its /dev and /sys/class are covered with tmpfs mounts that
// bind every entry of the machine's back and add the lab's, so the
// program sees the machine's devices, net devices and the rest as before.
// The namespace goes with the program.
package hostfs

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"
)

// HostName is a host of the lab a program may name: its name and the
// address the name resolves to (its front-end address; rdma_cm takes it to
// the host's RDMA NIC).
type HostName struct {
	Name string
	Addr netip.Addr
}

// hostsMarker heads the lab's lines in a program's /etc/hosts.
const hostsMarker = "# the lab's hosts (rocelab exec)"

// hostsFile is the machine's /etc/hosts (orig) and a line per lab host.
func hostsFile(orig []byte, hosts []HostName) []byte {
	b := bytes.Clone(orig)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	b = append(b, hostsMarker+"\n"...)
	for _, h := range hosts {
		b = fmt.Appendf(b, "%s\t%s\n", h.Addr, h.Name)
	}
	return b
}

// Device is one verbs device of the host, as the files describe it.
type Device struct {
	// Name is the verbs device name (rocelab_gpu0), Index its place in
	// the device list (uverbsIndex).
	Name  string
	Index int
	// Netdev is the host's interface behind the port (ndevs of every GID).
	Netdev string
	GUID   [8]byte
	// GIDs is the port's GID table; V2 marks RoCE v2 entries.
	GIDs    []GID
	RateBps uint64
	MTU     int
}

// GID is one GID table entry.
type GID struct {
	Raw [16]byte
	V2  bool
}

// UverbsMajor and UverbsMinorBase number the uverbs character devices as
// Linux does (major 231, minors from 192): a program that stats them sees
// what it would on a machine with an RDMA stack; one that opens them
// gets ENXIO (no such device), as with a driver unloaded.
const (
	UverbsMajor     = 231
	UverbsMinorBase = 192
)

// file is one file of the tree: its path under /sys/class and contents.
type file struct{ path, text string }

// sysFiles lists the files of /sys/class for devs.
func sysFiles(devs []Device) []file {
	fs := []file{{"infiniband_verbs/abi_version", "6"}}
	for _, d := range devs {
		u := fmt.Sprintf("infiniband_verbs/uverbs%d/", d.Index)
		fs = append(fs, file{u + "ibdev", d.Name}, file{u + "abi_version", "1"})
		p := "infiniband/" + d.Name + "/"
		fs = append(fs,
			file{p + "node_type", "1: CA"},
			file{p + "node_guid", guid(d.GUID)},
			file{p + "sys_image_guid", guid(d.GUID)},
			file{p + "fw_ver", "rocelab 1"},
			file{p + "hca_type", "rocelab"},
			file{p + "node_desc", d.Name},
			file{p + "ports/1/state", "4: ACTIVE"},
			file{p + "ports/1/phys_state", "5: LinkUp"},
			file{p + "ports/1/link_layer", "Ethernet"},
			file{p + "ports/1/rate", rate(d.RateBps)},
			file{p + "ports/1/lid", "0x0"},
			file{p + "ports/1/sm_lid", "0x0"},
			file{p + "ports/1/lid_mask_count", "0"},
			file{p + "ports/1/cap_mask", "0x00010000"},
		)
		for i, g := range d.GIDs {
			typ := "IB/RoCE v1"
			if g.V2 {
				typ = "RoCE v2"
			}
			fs = append(fs,
				file{fmt.Sprintf("%sports/1/gids/%d", p, i), gidText(g.Raw)},
				file{fmt.Sprintf("%sports/1/gid_attrs/types/%d", p, i), typ},
				file{fmt.Sprintf("%sports/1/gid_attrs/ndevs/%d", p, i), d.Netdev})
		}
	}
	return fs
}

func guid(g [8]byte) string {
	return fmt.Sprintf("%02x%02x:%02x%02x:%02x%02x:%02x%02x", g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7])
}

// gidText is a GID as sysfs writes it: eight groups of four hex digits.
func gidText(raw [16]byte) string {
	var b strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02x%02x", raw[i], raw[i+1])
	}
	return b.String()
}

// rate is a port's rate as sysfs writes it ("400 Gb/sec (4X NDR)"), the
// width and lane speed as the library's ibv_query_port gives them.
func rate(bps uint64) string {
	g := bps / 1e9
	lanes := map[uint64]string{400: "4X NDR", 200: "4X HDR", 100: "4X EDR", 50: "2X HDR", 25: "1X EDR", 800: "8X NDR"}
	if l, ok := lanes[g]; ok {
		return fmt.Sprintf("%d Gb/sec (%s)", g, l)
	}
	return fmt.Sprintf("%d Gb/sec", g)
}
