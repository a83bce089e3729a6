package links

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"golang.org/x/sys/unix"
)

// Offloads are the ethtool feature names (as `ethtool -k` prints them)
// that Create turns off on every end: segmentation (tso, gso, ufo),
// receive coalescing (gro, lro), checksums (tx, rx), scatter-gather (sg)
// and VLAN tag offloads (txvlan, rxvlan). Names a device does not have or
// cannot change are skipped.
var Offloads = []string{
	"tx-scatter-gather", "tx-scatter-gather-fraglist",
	"tx-checksum-ipv4", "tx-checksum-ip-generic", "tx-checksum-ipv6", "tx-checksum-fcoe-crc", "tx-checksum-sctp",
	"rx-checksum",
	"tx-tcp-segmentation", "tx-tcp-ecn-segmentation", "tx-tcp-mangleid-segmentation", "tx-tcp6-segmentation",
	"tx-tcp-accecn-segmentation", "tx-udp-segmentation", "tx-gso-list", "tx-generic-segmentation",
	"tx-gso-partial", "tx-gre-segmentation", "tx-gre-csum-segmentation", "tx-ipxip4-segmentation",
	"tx-ipxip6-segmentation", "tx-udp_tnl-segmentation", "tx-udp_tnl-csum-segmentation", "tx-sctp-segmentation",
	"tx-esp-segmentation", "tx-tunnel-remcsum-segmentation",
	"rx-gro", "rx-lro", "rx-gro-list", "rx-udp-gro-forwarding", "rx-gro-hw",
	"tx-vlan-hw-insert", "rx-vlan-hw-parse", "tx-vlan-stag-hw-insert", "rx-vlan-stag-hw-parse",
}

// ethtool is a socket opened in one namespace, for ethtool ioctls on the
// interfaces of that namespace.
type ethtool struct{ fd int }

func openEthtool(ns string) (*ethtool, error) {
	fd := -1
	err := netns.Do(ns, func() error {
		var err error
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ethtool socket in netns %q: %w", ns, err)
	}
	return &ethtool{fd: fd}, nil
}

func (e *ethtool) Close() error { return unix.Close(e.fd) }

// ifreqData is struct ifreq with ifr_data set.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// ioctl runs SIOCETHTOOL on ifname with buf as the ethtool command.
func (e *ethtool) ioctl(ifname string, buf []byte) error {
	if len(ifname) >= unix.IFNAMSIZ {
		return fmt.Errorf("interface name %q too long", ifname)
	}
	var ifr ifreqData
	copy(ifr.name[:], ifname)
	ifr.data = unsafe.Pointer(&buf[0])
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(e.fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(buf)
	if errno != 0 {
		return errno
	}
	return nil
}

const (
	ethSSFeatures = 4  // ETH_SS_FEATURES
	ethGStringLen = 32 // ETH_GSTRING_LEN
)

// featureNames returns the names of ifname's features, by bit.
func (e *ethtool) featureNames(ifname string) ([]string, error) {
	// struct ethtool_sset_info { u32 cmd; u32 reserved; u64 sset_mask; u32 data[]; }
	info := make([]byte, 16+4)
	binary.NativeEndian.PutUint32(info[0:], unix.ETHTOOL_GSSET_INFO)
	binary.NativeEndian.PutUint64(info[8:], 1<<ethSSFeatures)
	if err := e.ioctl(ifname, info); err != nil {
		return nil, fmt.Errorf("ETHTOOL_GSSET_INFO on %s: %w", ifname, err)
	}
	if binary.NativeEndian.Uint64(info[8:]) == 0 {
		return nil, fmt.Errorf("ETHTOOL_GSSET_INFO on %s: no feature strings", ifname)
	}
	n := binary.NativeEndian.Uint32(info[16:])
	// struct ethtool_gstrings { u32 cmd; u32 string_set; u32 len; u8 data[]; }
	gs := make([]byte, 12+int(n)*ethGStringLen)
	binary.NativeEndian.PutUint32(gs[0:], unix.ETHTOOL_GSTRINGS)
	binary.NativeEndian.PutUint32(gs[4:], ethSSFeatures)
	binary.NativeEndian.PutUint32(gs[8:], n)
	if err := e.ioctl(ifname, gs); err != nil {
		return nil, fmt.Errorf("ETHTOOL_GSTRINGS on %s: %w", ifname, err)
	}
	names := make([]string, n)
	for i := range names {
		s := gs[12+i*ethGStringLen : 12+(i+1)*ethGStringLen]
		if j := bytes.IndexByte(s, 0); j >= 0 {
			s = s[:j]
		}
		names[i] = string(s)
	}
	return names, nil
}

// featureBlocks is ETHTOOL_GFEATURES' answer: per 32 features, the
// available (changeable), requested, active and never-changed bits.
type featureBlocks struct{ available, requested, active, never []uint32 }

func (f featureBlocks) bit(v []uint32, i int) bool { return v[i/32]&(1<<(i%32)) != 0 }

func (e *ethtool) getFeatures(ifname string, n int) (featureBlocks, error) {
	blocks := (n + 31) / 32
	// struct ethtool_gfeatures { u32 cmd; u32 size; struct { u32 available, requested, active, never_changed; } features[]; }
	buf := make([]byte, 8+16*blocks)
	binary.NativeEndian.PutUint32(buf[0:], unix.ETHTOOL_GFEATURES)
	binary.NativeEndian.PutUint32(buf[4:], uint32(blocks))
	if err := e.ioctl(ifname, buf); err != nil {
		return featureBlocks{}, fmt.Errorf("ETHTOOL_GFEATURES on %s: %w", ifname, err)
	}
	var f featureBlocks
	for i := range blocks {
		b := buf[8+16*i:]
		f.available = append(f.available, binary.NativeEndian.Uint32(b[0:]))
		f.requested = append(f.requested, binary.NativeEndian.Uint32(b[4:]))
		f.active = append(f.active, binary.NativeEndian.Uint32(b[8:]))
		f.never = append(f.never, binary.NativeEndian.Uint32(b[12:]))
	}
	return f, nil
}

// Features returns the active state of every feature of the interface
// ifname in namespace ns ("" = the caller's), by ethtool name.
func Features(ns, ifname string) (map[string]bool, error) {
	e, err := openEthtool(ns)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	names, err := e.featureNames(ifname)
	if err != nil {
		return nil, err
	}
	f, err := e.getFeatures(ifname, len(names))
	if err != nil {
		return nil, err
	}
	m := make(map[string]bool, len(names))
	for i, name := range names {
		if name != "" {
			m[name] = f.bit(f.active, i)
		}
	}
	return m, nil
}

// SetFeatures turns the named features on or off on ifname in namespace
// ns. Features the device lacks or cannot change are skipped. It returns
// an error if a changeable feature did not reach the wanted state.
func SetFeatures(ns, ifname string, want map[string]bool) error {
	e, err := openEthtool(ns)
	if err != nil {
		return err
	}
	defer e.Close()
	names, err := e.featureNames(ifname)
	if err != nil {
		return err
	}
	return e.setFeatures(ifname, names, want)
}

// setFeatures is SetFeatures with the feature names known.
func (e *ethtool) setFeatures(ifname string, names []string, want map[string]bool) error {
	f, err := e.getFeatures(ifname, len(names))
	if err != nil {
		return err
	}
	blocks := len(f.available)
	// struct ethtool_sfeatures { u32 cmd; u32 size; struct { u32 valid, requested; } features[]; }
	buf := make([]byte, 8+8*blocks)
	binary.NativeEndian.PutUint32(buf[0:], unix.ETHTOOL_SFEATURES)
	binary.NativeEndian.PutUint32(buf[4:], uint32(blocks))
	var changed []int
	for i, name := range names {
		on, ok := want[name]
		if !ok || !f.bit(f.available, i) {
			continue
		}
		changed = append(changed, i)
		valid := binary.NativeEndian.Uint32(buf[8+8*(i/32):])
		binary.NativeEndian.PutUint32(buf[8+8*(i/32):], valid|1<<(i%32))
		if on {
			req := binary.NativeEndian.Uint32(buf[12+8*(i/32):])
			binary.NativeEndian.PutUint32(buf[12+8*(i/32):], req|1<<(i%32))
		}
	}
	if len(changed) == 0 {
		return nil
	}
	// The kernel answers with ETHTOOL_F_WISH (some wanted bits were not
	// applied) as a positive return value, not an error; the read-back
	// below is what counts.
	if err := e.ioctl(ifname, buf); err != nil {
		return fmt.Errorf("ETHTOOL_SFEATURES on %s: %w", ifname, err)
	}
	f, err = e.getFeatures(ifname, len(names))
	if err != nil {
		return err
	}
	for _, i := range changed {
		if f.bit(f.active, i) != want[names[i]] {
			return fmt.Errorf("set features on %s: %s is still %v", ifname, names[i], f.bit(f.active, i))
		}
	}
	return nil
}

// DisableOffloads turns off every feature in Offloads on ifname in
// namespace ns and checks that they are off.
func DisableOffloads(ns, ifname string) error {
	want := make(map[string]bool, len(Offloads))
	for _, n := range Offloads {
		want[n] = false
	}
	return SetFeatures(ns, ifname, want)
}
