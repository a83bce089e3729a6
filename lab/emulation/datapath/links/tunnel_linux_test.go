package links_test

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns/netnstest"
	"github.com/rocelab/rocelab/lab/emulation/datapath/links/linkstest"
	"github.com/rocelab/rocelab/wire/wiretest"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/datapath/afpacket"
	"github.com/rocelab/rocelab/lab/emulation/datapath/links"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// machines makes two "machines" — namespaces joined by an underlay veth
// of MTU mtu, addressed 198.18.9.1 and .2 — and returns them with the
// underlay's interface names.
func machines(t testing.TB, mtu int) (m1, m2, dev1, dev2 string) {
	t.Helper()
	m1, m2 = netnstest.NewUnique(t, ""), netnstest.NewUnique(t, "")
	id := netnstest.Unique("")
	dev1, dev2 = "rlu1"+id, "rlu2"+id
	linkstest.Veth(t, links.Veth{A: links.End{NetNS: m1, Name: dev1}, B: links.End{NetNS: m2, Name: dev2}, MTU: mtu})
	for _, e := range []struct{ ns, dev, ip string }{{m1, dev1, "198.18.9.1/24"}, {m2, dev2, "198.18.9.2/24"}} {
		h, err := netns.Handle(e.ns)
		if err != nil {
			t.Fatal(err)
		}
		l, err := h.LinkByName(e.dev)
		if err == nil {
			a, _ := netlink.ParseAddr(e.ip)
			err = h.AddrAdd(l, a)
		}
		h.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return m1, m2, dev1, dev2
}

var under1, under2 = netip.MustParseAddr("198.18.9.1"), netip.MustParseAddr("198.18.9.2")

// tunnelPair makes a link from a node namespace on m1 to one on m2 over
// VXLAN with vni and returns both ends.
func tunnelPair(t testing.TB, m1, m2, dev1, dev2 string, vni uint32, mtu int) (a, b links.Tunnel) {
	t.Helper()
	n1, n2 := netnstest.NewUnique(t, ""), netnstest.NewUnique(t, "")
	id := netnstest.Unique("")
	macA, _ := net.ParseMAC("02:3f:b0:00:01:01")
	macB, _ := net.ParseMAC("02:3f:b0:00:02:01")
	a = links.Tunnel{End: links.End{NetNS: n1, Name: "rlxa" + id, MAC: macA, Alias: "rocelab:t:n1:p1", NoIPv6: true},
		Underlay: m1, Device: dev1, VNI: vni, Local: under1, Remote: under2, MTU: mtu}
	b = links.Tunnel{End: links.End{NetNS: n2, Name: "rlxb" + id, MAC: macB, Alias: "rocelab:t:n2:p1", NoIPv6: true},
		Underlay: m2, Device: dev2, VNI: vni, Local: under2, Remote: under1, MTU: mtu}
	for _, e := range []links.Tunnel{a, b} {
		if err := links.CreateTunnel(e); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

// TestTunnelCarriesEveryFrame sends a PFC frame and a 4 KB RoCE-sized
// frame from one node's tunnel port to the other's, across the underlay,
// and reads both back byte for byte: the link is a cable, not a bridge.
func TestTunnelCarriesEveryFrame(t *testing.T) {
	m1, m2, dev1, dev2 := machines(t, 9000)
	a, b := tunnelPair(t, m1, m2, dev1, dev2, 4242, 4264)
	for _, e := range []links.Tunnel{a, b} {
		h, err := netns.Handle(e.End.NetNS)
		if err != nil {
			t.Fatal(err)
		}
		l, err := h.LinkByName(e.End.Name)
		h.Close()
		if err != nil {
			t.Fatalf("%s not in its node's namespace: %v", e.End.Name, err)
		}
		at := l.Attrs()
		vx, ok := l.(*netlink.Vxlan)
		if !ok || vx.VxlanId != int(e.VNI) || vx.Port != links.DefaultVXLANPort || vx.Learning {
			t.Errorf("%s: %T %+v", e.End.Name, l, l)
		}
		if at.MTU != 4264 || at.HardwareAddr.String() != e.End.MAC.String() || at.Alias != e.End.Alias || at.Flags&net.FlagUp == 0 {
			t.Errorf("%s: mtu %d mac %v alias %q flags %v", e.End.Name, at.MTU, at.HardwareAddr, at.Alias, at.Flags)
		}
		feats, err := links.Features(e.End.NetNS, e.End.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"tx-checksum-ip-generic", "tx-scatter-gather", "rx-gro"} {
			if feats[f] {
				t.Errorf("%s: %s still on", e.End.Name, f)
			}
		}
	}
	tx, err := afpacket.Open(a.End.NetNS, a.End.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	rx, err := afpacket.Open(b.End.NetNS, b.End.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()

	data := make([]byte, 14+4200)
	copy(data, b.End.MAC)
	copy(data[6:], a.End.MAC)
	binary.BigEndian.PutUint16(data[12:], 0x0800)
	for i := 14; i < len(data); i++ {
		data[i] = byte(i)
	}
	want := [][]byte{wiretest.PFC(t, [6]byte(a.End.MAC), 3, 0xffff), data}
	got := readFrames(t, rx, tx, want, 2*time.Second)
	for i := range want {
		if i >= len(got) || !bytes.Equal(got[i], want[i]) {
			t.Fatalf("frame %d did not cross the tunnel intact (read %d frames)", i, len(got))
		}
	}
}

// readFrames writes frames on tx and returns what rx reads of them (the
// frames from tx's MAC), until as many arrived or timeout passed.
func readFrames(t *testing.T, rx, tx *afpacket.Conn, frames [][]byte, timeout time.Duration) [][]byte {
	t.Helper()
	if _, err := tx.WriteBatch(frames); err != nil {
		t.Fatal(err)
	}
	bufs := [][]byte{make([]byte, 9100)}
	lens := []int{0}
	var got [][]byte
	for deadline := time.Now().Add(timeout); len(got) < len(frames) && time.Now().Before(deadline); {
		if _, err := rx.Wait(50 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		n, err := rx.ReadBatch(bufs, lens)
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 && bytes.Equal(bufs[0][6:12], frames[0][6:12]) {
			got = append(got, bytes.Clone(bufs[0][:lens[0]]))
		}
	}
	return got
}

// TestTunnelUnderlayMTU: a link whose frames would not fit the underlay
// is refused up front, saying what MTU it needs, and leaves nothing.
func TestTunnelUnderlayMTU(t *testing.T) {
	m1, _, dev1, _ := machines(t, 1500)
	n1 := netnstest.NewUnique(t, "")
	tun := links.Tunnel{End: links.End{NetNS: n1, Name: "rlxm" + netnstest.Unique("")}, Underlay: m1, Device: dev1, VNI: 7, Local: under1, Remote: under2, MTU: 4264}
	err := links.CreateTunnel(tun)
	if err == nil || !strings.Contains(err.Error(), "needs 4314") {
		t.Fatalf("CreateTunnel over a 1500 underlay = %v, want an MTU error naming 4314", err)
	}
	h, _ := netns.Handle(n1)
	defer h.Close()
	if _, err := h.LinkByName(tun.End.Name); err == nil {
		t.Error("a refused tunnel left its device")
	}
	// No Device given (the agent's DaemonSet passes none): the device the
	// route to the far machine leaves by is checked, and named.
	tun.Device = ""
	err = links.CreateTunnel(tun)
	if err == nil || !strings.Contains(err.Error(), "underlay "+dev1+" (the route to "+under2.String()+" leaves by it) has MTU 1500, the link needs 4314") {
		t.Fatalf("CreateTunnel by route over a 1500 underlay = %v, want an MTU error naming %s, 1500 and 4314", err, dev1)
	}
	if _, err := h.LinkByName(tun.End.Name); err == nil {
		t.Error("a refused tunnel left its device")
	}
	// A link that fits is made by route too.
	tun.MTU = 1400
	if err := links.CreateTunnel(tun); err != nil {
		t.Fatalf("CreateTunnel by route of a 1400 link over a 1500 underlay: %v", err)
	}
	// An underlay address no route reaches is an error that says so.
	far := tun
	far.End.Name, far.Remote = "rlxn"+netnstest.Unique(""), netip.MustParseAddr("203.0.113.9")
	if err := links.CreateTunnel(far); err == nil || !strings.Contains(err.Error(), "203.0.113.9") {
		t.Errorf("CreateTunnel to an unrouted address = %v, want an error naming it", err)
	}
	for _, bad := range []links.Tunnel{
		{End: links.End{NetNS: n1, Name: "x"}, VNI: 0, Local: under1, Remote: under2},
		{End: links.End{NetNS: n1, Name: "x"}, VNI: 1 << 24, Local: under1, Remote: under2},
		{End: links.End{NetNS: n1, Name: "x"}, VNI: 1, Local: under1},
		{End: links.End{NetNS: n1, Name: "x"}, VNI: 1, Local: under1, Remote: netip.MustParseAddr("2001:db8::1")},
	} {
		if err := links.CreateTunnel(bad); err == nil {
			t.Errorf("CreateTunnel(%v) accepted", bad)
		}
	}
}

// TestTunnelDontFragment: a tunnel sets DF on its datagrams, so a frame
// that the underlay cannot carry whole (its MTU lowered under a running
// link) is dropped where it would have crossed as IP fragments and come
// out reassembled; frames that fit still cross.
func TestTunnelDontFragment(t *testing.T) {
	m1, m2, dev1, dev2 := machines(t, 9000)
	a, b := tunnelPair(t, m1, m2, dev1, dev2, 4343, 4264)
	for _, e := range []struct{ ns, dev string }{{m1, dev1}, {m2, dev2}} {
		h, err := netns.Handle(e.ns)
		if err != nil {
			t.Fatal(err)
		}
		l, err := h.LinkByName(e.dev)
		if err == nil {
			err = h.LinkSetMTU(l, 1500)
		}
		h.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	tx, err := afpacket.Open(a.End.NetNS, a.End.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	rx, err := afpacket.Open(b.End.NetNS, b.End.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	frame := func(n int) []byte {
		f := make([]byte, n)
		copy(f, b.End.MAC)
		copy(f[6:], a.End.MAC)
		binary.BigEndian.PutUint16(f[12:], 0x0800)
		return f
	}
	if got := readFrames(t, rx, tx, [][]byte{frame(14 + 4200)}, time.Second); len(got) != 0 {
		t.Fatalf("a 4214-byte frame crossed a 1500 underlay (%d bytes): the tunnel fragments", len(got[0]))
	}
	if got := readFrames(t, rx, tx, [][]byte{frame(14 + 1400)}, 2*time.Second); len(got) != 1 {
		t.Fatalf("a 1414-byte frame did not cross a 1500 underlay")
	}
}

// BenchmarkHop times one frame across a link, written with sendmmsg on
// one end and read with recvmmsg on the other, in batches of 32 frames
// of 4,214 bytes (a 4 KB RoCE payload): over a veth pair, and over a
// VXLAN tunnel between two machines' namespaces (the underlay a veth).
// ns/op is wall time per frame; cpu-ns/frame is the process's CPU (user
// + system, which includes the kernel's encapsulation in softirq when it
// runs on the sender's thread) per frame.
func BenchmarkHop(b *testing.B) {
	for _, kind := range []string{"veth", "vxlan"} {
		b.Run(kind, func(b *testing.B) {
			var txNS, txIf, rxNS, rxIf string
			var src net.HardwareAddr
			switch kind {
			case "veth":
				id := netnstest.Unique("")
				src, _ = net.ParseMAC("02:3f:c0:00:01:01")
				txNS, rxNS = netnstest.NewUnique(b, ""), netnstest.NewUnique(b, "")
				txIf, rxIf = "rlha"+id, "rlhb"+id
				linkstest.Veth(b, links.Veth{A: links.End{NetNS: txNS, Name: txIf, MAC: src, NoIPv6: true}, B: links.End{NetNS: rxNS, Name: rxIf, NoIPv6: true}, MTU: 4264})
			case "vxlan":
				m1, m2, d1, d2 := machines(b, 9000)
				a, z := tunnelPair(b, m1, m2, d1, d2, 99, 4264)
				txNS, txIf, src = a.End.NetNS, a.End.Name, a.End.MAC
				rxNS, rxIf = z.End.NetNS, z.End.Name
			}
			tx, err := afpacket.Open(txNS, txIf, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer tx.Close()
			rx, err := afpacket.Open(rxNS, rxIf, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer rx.Close()
			const batch = 32
			frame := make([]byte, 4214)
			for i := range 6 {
				frame[i] = 0x02
			}
			copy(frame[6:], src)
			binary.BigEndian.PutUint16(frame[12:], 0x0800)
			frames := make([][]byte, batch)
			bufs := make([][]byte, batch)
			for i := range frames {
				frames[i] = frame
				bufs[i] = make([]byte, 9100)
			}
			lens := make([]int, batch)
			cpu0 := cpuNow()
			b.ResetTimer()
			lost := 0
			for done := 0; done < b.N; done += batch {
				if _, err := tx.WriteBatch(frames); err != nil {
					b.Fatal(err)
				}
				for got := 0; got < batch; {
					ok, err := rx.Wait(100 * time.Millisecond)
					if err != nil {
						b.Fatal(err)
					}
					if !ok {
						lost += batch - got
						break
					}
					n, err := rx.ReadBatch(bufs, lens)
					if err != nil {
						b.Fatal(err)
					}
					got += n
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuNow()-cpu0)/float64(b.N), "cpu-ns/frame")
			if lost > 0 {
				b.Logf("%d frames not read within 100 ms", lost)
			}
		})
	}
}

// cpuNow is the process's user+system CPU time in ns.
func cpuNow() int64 {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// TestTunnelWaitsForHeldVNI: a tunnel whose VNI a VXLAN device of a
// deleted namespace still holds (the kernel tears a namespace down
// asynchronously; here an open handle keeps it alive, so the hold is as
// long as the test wants) is made once the old device goes, and the
// Maker says what it waited for; past TunnelWait the error names the VNI;
// a name already taken in the node's namespace fails at once.
func TestTunnelWaitsForHeldVNI(t *testing.T) {
	m1, _, dev1, _ := machines(t, 9000)
	mk := func(ns, name string) links.Tunnel {
		return links.Tunnel{End: links.End{NetNS: ns, Name: name, NoIPv6: true}, Underlay: m1, Device: dev1, VNI: 4343, Local: under1, Remote: under2, MTU: 4264}
	}
	// hold makes the tunnel in a namespace of its own, then deletes the
	// namespace's name while a handle keeps the namespace (and the
	// device, and its VNI) alive; release lets it go.
	hold := func() (release func()) {
		old := netnstest.NewUnique(t, "")
		if err := links.CreateTunnel(mk(old, "rlxo"+netnstest.Unique(""))); err != nil {
			t.Fatal(err)
		}
		fd, err := netns.Open(old)
		if err != nil {
			t.Fatal(err)
		}
		if err := netns.Delete(old); err != nil {
			t.Fatal(err)
		}
		return func() { fd.Close() }
	}

	release := hold()
	var what []string
	var took time.Duration
	m := &links.Maker{Waited: func(w string, d time.Duration) { what, took = append(what, w), d }}
	defer m.Close()
	go func() { time.Sleep(300 * time.Millisecond); release() }()
	tun := mk(netnstest.NewUnique(t, ""), "rlxn"+netnstest.Unique(""))
	if err := m.CreateTunnel(tun); err != nil {
		t.Fatalf("CreateTunnel while a dying namespace held the VNI: %v", err)
	}
	if len(what) != 1 || !strings.Contains(what[0], "vni 4343") || took < 250*time.Millisecond {
		t.Errorf("Waited heard %q after %v, want one wait of about 300 ms naming vni 4343", what, took)
	}
	if err := links.Delete(tun.End.NetNS, tun.End.Name); err != nil {
		t.Fatal(err)
	}

	release = hold()
	defer release()
	bounded := &links.Maker{TunnelWait: 200 * time.Millisecond}
	defer bounded.Close()
	err := bounded.CreateTunnel(mk(netnstest.NewUnique(t, ""), "rlxn"+netnstest.Unique("")))
	if err == nil || !strings.Contains(err.Error(), "VNI 4343") || !strings.Contains(err.Error(), "still held") {
		t.Errorf("CreateTunnel with the VNI held past TunnelWait = %v, want an error saying VNI 4343 is still held", err)
	}

	// The name taken in the node's namespace: no wait.
	n := netnstest.NewUnique(t, "")
	taken := "rlxt" + netnstest.Unique("")
	linkstest.Veth(t, links.Veth{A: links.End{NetNS: n, Name: taken}, B: links.End{NetNS: n, Name: "rlxp" + netnstest.Unique("")}})
	start := time.Now()
	err = (&links.Maker{TunnelWait: 10 * time.Second}).CreateTunnel(mk(n, taken))
	if err == nil || !strings.Contains(err.Error(), "has an interface "+taken) {
		t.Errorf("CreateTunnel over a taken name = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("CreateTunnel over a taken name waited %v", d)
	}
}
