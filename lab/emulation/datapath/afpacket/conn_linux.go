package afpacket

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"runtime"
	"slices"
	"unsafe"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"golang.org/x/sys/unix"
)

// mmsghdr is struct mmsghdr; Go pads it to the C size on every arch.
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
}

const (
	ethPAll    = 0x0003 // ETH_P_ALL
	auxLen     = int(unsafe.Sizeof(unix.TpacketAuxdata{}))
	vlanHdrLen = 4
)

// Conn is an AF_PACKET socket bound to one interface. A Conn is used by
// one goroutine at a time for reading and one for writing; Close may be
// called from any goroutine.
type Conn struct {
	fd      int
	ifindex int
	ifname  string
	mac     net.HardwareAddr
	mtu     int
	cfg     Config

	// ring is the receive ring (Config.RxRing), nil for recvmmsg.
	ring *rxRing

	rmsgs []mmsghdr
	riov  []unix.Iovec
	rctl  []byte // MaxBatch control buffers of ctlLen bytes
	wmsgs []mmsghdr
	wiov  []unix.Iovec

	stats Stats
}

// ctlLen is one frame's control buffer: PACKET_AUXDATA and SCM_TIMESTAMPNS.
var ctlLen = unix.CmsgSpace(auxLen) + unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{})))

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// Open opens an AF_PACKET socket on interface ifname of the named
// namespace ns ("" = the caller's). cfg may be nil.
func Open(ns, ifname string, cfg *Config) (*Conn, error) {
	c := &Conn{fd: -1, ifname: ifname, cfg: cfg.withDefaults()}
	err := netns.Do(ns, func() error {
		// Protocol 0: the socket receives nothing until bound, so no frame
		// of another interface slips in between socket and bind.
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		c.fd = fd
		c.ifindex, c.mac, c.mtu, err = ifInfo(fd, ifname)
		return err
	})
	if err != nil {
		if c.fd >= 0 {
			unix.Close(c.fd)
		}
		return nil, fmt.Errorf("afpacket: open %s in netns %q: %w", ifname, ns, err)
	}
	if err := c.setup(); err != nil {
		c.closeRing()
		unix.Close(c.fd)
		return nil, fmt.Errorf("afpacket: open %s in netns %q: %w", ifname, ns, err)
	}
	return c, nil
}

// ifreq is struct ifreq: the name, then a union of 24 bytes.
type ifreq struct {
	name [unix.IFNAMSIZ]byte
	data [24]byte
}

// ifInfo reads the index, MAC and MTU of interface ifname with three
// ioctls on fd, a socket in its namespace. (net.InterfaceByName dumps
// every link of the namespace, with their IPv6 statistics, for each call:
// a 64-port switch node made 64 such dumps of 65 links to start.)
func ifInfo(fd int, ifname string) (index int, mac net.HardwareAddr, mtu int, err error) {
	if len(ifname) >= unix.IFNAMSIZ || ifname == "" {
		return 0, nil, 0, fmt.Errorf("bad interface name %q", ifname)
	}
	get := func(req uint) (*ifreq, error) {
		var r ifreq
		copy(r.name[:], ifname)
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(unsafe.Pointer(&r)))
		if errno != 0 {
			return nil, fmt.Errorf("interface %s: %w", ifname, errno)
		}
		return &r, nil
	}
	r, err := get(unix.SIOCGIFINDEX)
	if err != nil {
		return 0, nil, 0, err
	}
	index = int(binary.NativeEndian.Uint32(r.data[:]))
	if r, err = get(unix.SIOCGIFMTU); err != nil {
		return 0, nil, 0, err
	}
	mtu = int(binary.NativeEndian.Uint32(r.data[:]))
	if r, err = get(unix.SIOCGIFHWADDR); err != nil {
		return 0, nil, 0, err
	}
	// struct sockaddr: a 2-byte family, then the address; all zeros (the
	// loopback's) is none, as net.Interface reports it.
	if a := r.data[2:8]; slices.ContainsFunc(a, func(b byte) bool { return b != 0 }) {
		mac = net.HardwareAddr(slices.Clone(a))
	}
	return index, mac, mtu, nil
}

func (c *Conn) setup() error {
	fd, cfg := c.fd, c.cfg
	if !cfg.SeeOutgoing {
		if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1); err != nil {
			return fmt.Errorf("PACKET_IGNORE_OUTGOING: %w", err)
		}
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1); err != nil {
		return fmt.Errorf("PACKET_AUXDATA: %w", err)
	}
	if !cfg.NoTimestamps {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
			return fmt.Errorf("SO_TIMESTAMPNS: %w", err)
		}
	}
	if cfg.QdiscBypass {
		if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_QDISC_BYPASS, 1); err != nil {
			return fmt.Errorf("PACKET_QDISC_BYPASS: %w", err)
		}
	}
	for _, b := range []struct{ force, plain, n int }{
		{unix.SO_RCVBUFFORCE, unix.SO_RCVBUF, cfg.RcvBuf}, {unix.SO_SNDBUFFORCE, unix.SO_SNDBUF, cfg.SndBuf},
	} {
		if unix.SetsockoptInt(fd, unix.SOL_SOCKET, b.force, b.n) != nil {
			if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, b.plain, b.n); err != nil {
				return fmt.Errorf("socket buffer: %w", err)
			}
		}
	}
	if cfg.RxRing > 0 {
		// Ethernet header and one VLAN tag the kernel might leave in.
		if err := c.setupRing(cfg.RxRing, max(c.mtu, 1500)+14+vlanHdrLen); err != nil {
			return err
		}
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(ethPAll), Ifindex: c.ifindex}); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	if !cfg.NoPromisc {
		mreq := unix.PacketMreq{Ifindex: int32(c.ifindex), Type: unix.PACKET_MR_PROMISC}
		if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
			return fmt.Errorf("promiscuous mode: %w", err)
		}
	}
	// Reset the kernel drop counter.
	unix.GetsockoptTpacketStats(fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	n := cfg.MaxBatch
	c.rmsgs, c.riov, c.rctl = make([]mmsghdr, n), make([]unix.Iovec, n), make([]byte, n*ctlLen)
	c.wmsgs, c.wiov = make([]mmsghdr, n), make([]unix.Iovec, n)
	return nil
}

// Interface is the name of the interface the Conn is bound to.
func (c *Conn) Interface() string { return c.ifname }

// HardwareAddr is the MAC of the interface.
func (c *Conn) HardwareAddr() net.HardwareAddr { return c.mac }

// Close closes the socket.
func (c *Conn) Close() error {
	if c.fd < 0 {
		return ErrClosed
	}
	fd := c.fd
	c.fd = -1
	return errors.Join(unix.Close(fd), c.closeRing())
}

// ReadBatch reads up to len(bufs) pending frames (at most MaxBatch) into
// bufs, frame i's length into lens[i], and returns how many it read. It
// does not block: with nothing pending it returns 0, nil (wait with a
// Poller or Wait). A frame longer than its buffer is cut and counted in
// Stats.Truncated. len(lens) must be at least len(bufs).
func (c *Conn) ReadBatch(bufs [][]byte, lens []int) (int, error) {
	return c.ReadBatchStamped(bufs, lens, nil)
}

// ReadBatchStamped is ReadBatch that also returns each frame's kernel
// receive time (SO_TIMESTAMPNS, CLOCK_REALTIME) in stamps[i], as
// nanoseconds since the Unix epoch; 0 when the kernel gave none (with
// Config.NoTimestamps, say). stamps may be nil; otherwise len(stamps)
// must be at least len(bufs). The kernel takes the stamp when the frame
// enters the receiving interface's backlog — for a veth, the moment the
// peer's transmit hands it over — so stamps are per frame and in arrival
// order, however late the reader comes to read them.
func (c *Conn) ReadBatchStamped(bufs [][]byte, lens []int, stamps []int64) (int, error) {
	if c.fd < 0 {
		return 0, ErrClosed
	}
	n := min(len(bufs), len(c.rmsgs))
	if n == 0 {
		return 0, nil
	}
	if c.ring != nil {
		return c.readRing(bufs[:n], lens, stamps), nil
	}
	for i := range n {
		b := bufs[i]
		c.riov[i] = unix.Iovec{}
		if len(b) > 0 {
			c.riov[i].Base = &b[0]
		}
		c.riov[i].SetLen(len(b))
		m := &c.rmsgs[i].hdr
		*m = unix.Msghdr{Iov: &c.riov[i], Iovlen: 1, Control: &c.rctl[i*ctlLen]}
		m.SetControllen(ctlLen)
		c.rmsgs[i].len = 0
	}
	c.stats.RxSyscalls++
	r, _, errno := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(c.fd), uintptr(unsafe.Pointer(&c.rmsgs[0])), uintptr(n),
		unix.MSG_DONTWAIT|unix.MSG_TRUNC, 0, 0)
	runtime.KeepAlive(bufs)
	if errno == unix.EAGAIN || errno == unix.EINTR {
		return 0, nil
	}
	if errno != 0 {
		return 0, fmt.Errorf("afpacket: recvmmsg on %s: %w", c.ifname, errno)
	}
	got := int(r)
	for i := range got {
		l := int(c.rmsgs[i].len)
		ctl := parseControl(c.rctl[i*ctlLen : i*ctlLen+int(c.rmsgs[i].hdr.Controllen)])
		if ctl.vlan {
			l = insertVLAN(bufs[i], l, ctl.tpid, ctl.tci)
		}
		if l > len(bufs[i]) {
			c.stats.Truncated++
			l = len(bufs[i])
		}
		lens[i] = l
		if stamps != nil {
			stamps[i] = ctl.stamp
		}
		c.stats.RxFrames++
		c.stats.RxBytes += uint64(l)
	}
	return got, nil
}

// control is what a received frame's control messages said.
type control struct {
	vlan      bool // the kernel stripped an 802.1Q tag: tpid, tci
	tpid, tci uint16
	stamp     int64 // receive time, Unix ns; 0 if none
}

// parseControl reads the PACKET_AUXDATA (the VLAN tag the kernel
// stripped) and SCM_TIMESTAMPNS control messages of one frame.
func parseControl(ctl []byte) control {
	var out control
	for len(ctl) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&ctl[0]))
		if int(h.Len) < unix.SizeofCmsghdr || int(h.Len) > len(ctl) {
			return out
		}
		data := ctl[unix.CmsgLen(0):h.Len]
		switch {
		case h.Level == unix.SOL_PACKET && h.Type == unix.PACKET_AUXDATA && len(data) >= auxLen:
			aux := (*unix.TpacketAuxdata)(unsafe.Pointer(&data[0]))
			if aux.Status&unix.TP_STATUS_VLAN_VALID != 0 {
				out.vlan, out.tci, out.tpid = true, aux.Vlan_tci, aux.Vlan_tpid
				if aux.Status&unix.TP_STATUS_VLAN_TPID_VALID == 0 || out.tpid == 0 {
					out.tpid = unix.ETH_P_8021Q
				}
			}
		case h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && len(data) >= int(unsafe.Sizeof(unix.Timespec{})):
			ts := (*unix.Timespec)(unsafe.Pointer(&data[0]))
			out.stamp = ts.Nano()
		}
		ctl = ctl[min(len(ctl), unix.CmsgSpace(int(h.Len)-unix.CmsgLen(0))):]
	}
	return out
}

// insertVLAN puts the 802.1Q tag back after the MAC addresses of the
// frame of length l in b and returns the new length (which may exceed
// len(b): the tail is then lost, and the caller counts a truncation).
func insertVLAN(b []byte, l int, tpid, tci uint16) int {
	if l < 12 || len(b) < 16 {
		return l
	}
	end := min(l, len(b)-vlanHdrLen)
	copy(b[16:end+vlanHdrLen], b[12:end])
	binary.BigEndian.PutUint16(b[12:], tpid)
	binary.BigEndian.PutUint16(b[14:], tci)
	return l + vlanHdrLen
}

// WriteBatch sends frames (complete Ethernet frames, no FCS) in order
// and returns how many the kernel took. It waits for socket buffer space
// when needed. A frame the kernel drops because the receiving end is
// overloaded counts as sent and in Stats.TxDropped: that is a drop on the
// wire, not an error.
func (c *Conn) WriteBatch(frames [][]byte) (int, error) {
	sent := 0
	for sent < len(frames) {
		if c.fd < 0 {
			return sent, ErrClosed
		}
		n := min(len(frames)-sent, len(c.wmsgs))
		for i := range n {
			f := frames[sent+i]
			c.wiov[i] = unix.Iovec{}
			if len(f) > 0 {
				c.wiov[i].Base = &f[0]
			}
			c.wiov[i].SetLen(len(f))
			c.wmsgs[i].hdr = unix.Msghdr{Iov: &c.wiov[i], Iovlen: 1}
		}
		c.stats.TxSyscalls++
		r, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(c.fd), uintptr(unsafe.Pointer(&c.wmsgs[0])), uintptr(n),
			unix.MSG_DONTWAIT, 0, 0)
		runtime.KeepAlive(frames)
		switch {
		case errno == 0:
			for _, f := range frames[sent : sent+int(r)] {
				c.stats.TxFrames++
				c.stats.TxBytes += uint64(len(f))
			}
			sent += int(r)
		case errno == unix.ENOBUFS:
			c.stats.TxDropped++
			sent++
		case errno == unix.EAGAIN:
			if err := c.waitWritable(); err != nil {
				return sent, err
			}
		case errno == unix.EINTR:
		default:
			return sent, fmt.Errorf("afpacket: sendmmsg on %s (frame of %d bytes): %w", c.ifname, len(frames[sent]), errno)
		}
	}
	return sent, nil
}

func (c *Conn) waitWritable() error {
	fds := []unix.PollFd{{Fd: int32(c.fd), Events: unix.POLLOUT}}
	for {
		_, err := unix.Poll(fds, 100)
		if err == nil || !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// Syscalls returns how many system calls reads and writes made (the
// Loop's emu.SyscallCounter). Call it from the goroutine that reads and
// writes.
func (c *Conn) Syscalls() (rx, tx uint64) { return c.stats.RxSyscalls, c.stats.TxSyscalls }

// Stats returns the Conn's counters. KernelDrops is read from the kernel,
// which resets it.
func (c *Conn) Stats() Stats {
	if c.fd >= 0 {
		if ks, err := unix.GetsockoptTpacketStats(c.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS); err == nil {
			c.stats.KernelDrops += uint64(ks.Drops)
		}
	}
	return c.stats
}
