package node_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/lab/emulation/datapath/emu"
	"github.com/rocelab/rocelab/lab/emulation/datapath/verbs"
	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// These tests speak libibverbs/proto.h from Go, as the C library does,
// to two endpoint nodes cabled back to back in memory: the server's
// requests, its errors for bad input, and the NIC placing data in a
// program's memory with no call from the program.

var le = binary.LittleEndian

const (
	opHello, opOpen, opAllocPD, opRegMR, opCreateCQ, opCreateQP, opModifyQP, opPostSend = 1, 2, 3, 5, 7, 9, 10, 12
	opQueryQP                                                                           = 14
	// protoVersion is libibverbs/proto.h's RL_PROTO_VERSION (2: scatter/gather lists).
	protoVersion                       = 2
	eINVAL, ePROTO, eNODEV, eOPNOTSUPP = 22, 71, 19, 95
)

func startEndpoint(t *testing.T, dir string, h int, peer string, w *emu.MemWaiter, p *emu.MemPort) string {
	t.Helper()
	cfg := node.Config{Kind: nodeapi.KindEndpoint, Name: fmt.Sprintf("h%d", h), Scale: 200, Seed: 3,
		Socket: filepath.Join(dir, fmt.Sprintf("h%d.sock", h)),
		Ports: []node.PortConfig{{IfName: fmt.Sprintf("h%d-gpu0", h), MAC: fmt.Sprintf("02:e0:00:00:%02x:00", h), PeerMAC: peer,
			Rate: 100 * clock.Gbps, Delay: clock.Microsecond}},
		NICs: []node.NICConfig{{Name: fmt.Sprintf("h%d:gpu0", h), IP: fmt.Sprintf("10.1.%d.1", h), MTU: 4096}}}
	n, err := node.New(cfg, node.IO{Ports: []emu.PortIO{p}, Waiter: w}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("node h%d: %v", h, err)
		}
	})
	path := verbs.SocketPath(cfg.Socket)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("unixpacket", path); err == nil {
			c.Close()
			return cfg.Socket
		}
		if time.Now().After(deadline) {
			t.Fatalf("no verbs socket at %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// prog is one program's open device, spoken to as the C library does.
type prog struct {
	t  *testing.T
	uc *net.UnixConn
}

func dial(t *testing.T, apiSocket string) *prog {
	t.Helper()
	c, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: verbs.SocketPath(apiSocket), Net: "unixpacket"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &prog{t: t, uc: c}
}

func msg(op, h uint32, body []byte) []byte {
	b := make([]byte, 16, 16+len(body))
	le.PutUint32(b, op)
	le.PutUint32(b[4:], h)
	le.PutUint32(b[8:], uint32(len(body)))
	return append(b, body...)
}

// call sends a request and returns the reply's errno, words and body.
func (p *prog) call(op, h uint32, body []byte, fds ...int) (int32, string, []byte) {
	p.t.Helper()
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	if _, _, err := p.uc.WriteMsgUnix(msg(op, h, body), oob, nil); err != nil {
		p.t.Fatal(err)
	}
	buf := make([]byte, 1<<16)
	p.uc.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := p.uc.Read(buf)
	if err != nil {
		p.t.Fatalf("op %d: no reply: %v", op, err)
	}
	words := string(bytes.TrimRight(buf[8:128], "\x00"))
	return int32(le.Uint32(buf)), words, buf[128:n]
}

func (p *prog) ok(op, h uint32, body []byte, fds ...int) []byte {
	p.t.Helper()
	e, words, out := p.call(op, h, body, fds...)
	if e != 0 {
		p.t.Fatalf("op %d: errno %d: %s", op, e, words)
	}
	return out
}

func (p *prog) post(op, h uint32, body []byte) {
	p.t.Helper()
	if _, err := p.uc.Write(msg(op, h, body)); err != nil {
		p.t.Fatal(err)
	}
}

func u32s(v ...uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		le.PutUint32(b[4*i:], x)
	}
	return b
}

// memfd returns a sealable memfd of size bytes mapped shared.
func memfd(t *testing.T, size int) (int, []byte) {
	t.Helper()
	fd, err := unix.MemfdCreate("verbs-test", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		t.Fatal(err)
	}
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(mem); unix.Close(fd) })
	return fd, mem
}

func regMRBody(pd, access uint32, addr, length uint64, pieceLen uint64) []byte {
	b := make([]byte, 32+24)
	le.PutUint32(b, pd)
	le.PutUint32(b[4:], access)
	le.PutUint64(b[8:], addr)
	le.PutUint64(b[16:], length)
	le.PutUint32(b[24:], 1)
	le.PutUint64(b[32:], addr)
	le.PutUint64(b[40:], pieceLen)
	return b
}

// side is one connected QP and its memory.
type side struct {
	p          *prog
	mem        []byte
	addr       uint64
	lkey, rkey uint32
	ring       []byte
	qp, qpn    uint32
}

func (s *side) poll(t *testing.T, within time.Duration) (status, opcode uint8, wrID uint64) {
	t.Helper()
	head := (*uint32)(unsafe.Pointer(&s.ring[0]))
	tail := (*uint32)(unsafe.Pointer(&s.ring[64]))
	deadline := time.Now().Add(within)
	for atomic.LoadUint32(head) == atomic.LoadUint32(tail) {
		if time.Now().After(deadline) {
			t.Fatal("no completion")
		}
		time.Sleep(time.Millisecond)
	}
	i := atomic.LoadUint32(tail)
	e := s.ring[128+int(i&63)*32:]
	atomic.StoreUint32(tail, i+1)
	return e[20], e[21], le.Uint64(e)
}

func open(t *testing.T, api string) *side {
	t.Helper()
	p := dial(t, api)
	p.ok(opHello, 0, u32s(protoVersion))
	p.ok(opOpen, 0, make([]byte, 32))
	pd := le.Uint32(p.ok(opAllocPD, 0, nil))
	const size = 1 << 16
	fd, mem := memfd(t, size)
	addr := uint64(uintptr(unsafe.Pointer(&mem[0])))
	out := p.ok(opRegMR, 0, regMRBody(pd, 1|2|4, addr, size, size), fd)
	rfd, ring := memfd(t, 128+64*32)
	cq := le.Uint32(p.ok(opCreateCQ, 0, u32s(64, 0), rfd))
	qo := p.ok(opCreateQP, 0, u32s(pd, cq, cq, 64, 64, 0, 0, 0, 2, 0))
	return &side{p: p, mem: mem, addr: addr, lkey: le.Uint32(out[4:]), rkey: le.Uint32(out[8:]), ring: ring,
		qp: le.Uint32(qo), qpn: le.Uint32(qo[4:])}
}

func modify(mask, state, mtu, dqpn, rqpsn, sqpsn uint32, gid [16]byte) []byte {
	b := u32s(mask, state, 0, mtu, dqpn, rqpsn, sqpsn, 14, 7, 7, 12, 0)
	return append(b, gid[:]...)
}

func gidOf(ip string) [16]byte {
	var g [16]byte
	g[10], g[11] = 0xff, 0xff
	fmt.Sscanf(ip, "%d.%d.%d.%d", &g[12], &g[13], &g[14], &g[15])
	return g
}

func connect(t *testing.T, s *side, peer *side, peerIP string) {
	t.Helper()
	const state, av, mtu, dqpn, rqpsn, sqpsn = 1, 1 << 7, 1 << 8, 1 << 20, 1 << 12, 1 << 16
	s.p.ok(opModifyQP, s.qp, modify(state, 1, 0, 0, 0, 0, [16]byte{}))
	// A link-local GID names no IP: the error says which GID to use.
	var ll [16]byte
	ll[0], ll[1] = 0xfe, 0x80
	if e, words, _ := s.p.call(opModifyQP, s.qp, modify(state|av|mtu|dqpn|rqpsn, 2, 4096, peer.qpn, 100, 0, ll)); e != eINVAL || !strings.Contains(words, "index 3") {
		t.Errorf("RTR with a link-local GID: errno %d %q, want EINVAL naming GID index 3", e, words)
	}
	s.p.ok(opModifyQP, s.qp, modify(state|av|mtu|dqpn|rqpsn, 2, 4096, peer.qpn, 100, 0, gidOf(peerIP)))
	s.p.ok(opModifyQP, s.qp, modify(state|sqpsn, 3, 0, 0, 0, 100, [16]byte{}))
}

func writeWR(wrID, addr uint64, length, lkey uint32, raddr uint64, rkey uint32) []byte {
	b := make([]byte, 8+48)
	le.PutUint32(b, 1)
	w := b[8:]
	le.PutUint64(w, wrID)
	le.PutUint64(w[8:], addr)
	le.PutUint64(w[16:], raddr)
	le.PutUint32(w[24:], length)
	le.PutUint32(w[28:], lkey)
	le.PutUint32(w[32:], rkey)
	w[40] = 0 // IBV_WR_RDMA_WRITE
	w[41] = 1 // signaled
	return b
}

func TestServer(t *testing.T) {
	dir := t.TempDir()
	wa, wb := emu.NewMemWaiter(), emu.NewMemWaiter()
	pa, pb := wa.NewPort(), wb.NewPort()
	emu.Join(pa, pb)
	apiA := startEndpoint(t, dir, 1, "02:e0:00:00:02:00", wa, pa)
	apiB := startEndpoint(t, dir, 2, "02:e0:00:00:01:00", wb, pb)

	t.Run("devices", func(t *testing.T) {
		devs, err := verbs.Devices(verbs.SocketPath(apiA))
		if err != nil {
			t.Fatal(err)
		}
		if len(devs) != 1 || devs[0].Name != "rocelab_gpu0" || devs[0].NIC != "h1:gpu0" || devs[0].MAC.String() != "02:e0:00:00:01:00" || devs[0].RateBps != 100e9 {
			t.Fatalf("Devices = %+v", devs)
		}
		if g := devs[0].GUID(); g != [8]byte{0, 0xe0, 0, 0xff, 0xfe, 0, 1, 0} {
			t.Errorf("GUID %x", g)
		}
		if gids := devs[0].GIDs(); len(gids) < 2 || gids[0].V2 || !gids[1].V2 || gids[1].Raw[0] != 0xfe {
			t.Errorf("GIDs %v", gids)
		}
		if _, err := verbs.Devices(filepath.Join(dir, "nobody.sock")); err == nil {
			t.Error("Devices of a socket nobody serves: no error")
		}
	})
	t.Run("bad requests", func(t *testing.T) {
		p := dial(t, apiA)
		_, _, hello := p.call(opHello, 0, u32s(protoVersion))
		if n := le.Uint32(hello[4:]); n != 1 || !bytes.HasPrefix(hello[8:], []byte("rocelab_gpu0\x00")) {
			t.Errorf("hello: %d devices, first %q", n, bytes.TrimRight(hello[8:72], "\x00"))
		}
		for _, tc := range []struct {
			what   string
			op, h  uint32
			body   []byte
			errno  int32
			phrase string
		}{
			{"old protocol", opHello, 0, u32s(9), ePROTO, "version"},
			{"before open", opAllocPD, 0, nil, ePROTO, "before the device is open"},
			{"no such NIC", opOpen, 7, make([]byte, 32), eNODEV, "no NIC 7"},
			{"unknown congestion control", opOpen, 0, append([]byte("bbr"), make([]byte, 29)...), eINVAL, "ROCELAB_VERBS_CC"},
			{"body shorter than its header says", opOpen, 0, nil, ePROTO, ""},
		} {
			m := msg(tc.op, tc.h, tc.body)
			if tc.phrase == "" {
				le.PutUint32(m[8:], 99)
			}
			if _, err := p.uc.Write(m); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 256)
			n, _ := p.uc.Read(buf)
			e, words := int32(le.Uint32(buf)), string(bytes.TrimRight(buf[8:min(n, 128)], "\x00"))
			if e != tc.errno || !strings.Contains(words, tc.phrase) {
				t.Errorf("%s: errno %d %q, want %d and %q", tc.what, e, words, tc.errno, tc.phrase)
			}
		}
		p.ok(opOpen, 0, make([]byte, 32))
		pd := le.Uint32(p.ok(opAllocPD, 0, nil))
		fd, mem := memfd(t, 4096)
		addr := uint64(uintptr(unsafe.Pointer(&mem[0])))
		for _, tc := range []struct {
			what  string
			body  []byte
			fds   []int
			errno int32
		}{
			{"region past its memfd", regMRBody(pd, 1, addr, 8192, 8192), []int{fd}, eINVAL},
			{"no descriptor", regMRBody(pd, 1, addr, 4096, 4096), nil, ePROTO},
			{"zero-based region", regMRBody(pd, 1|32, addr, 4096, 4096), []int{fd}, eOPNOTSUPP},
			{"no such PD", regMRBody(pd+100, 1, addr, 4096, 4096), []int{fd}, eINVAL},
		} {
			if e, words, _ := p.call(opRegMR, 0, tc.body, tc.fds...); e != tc.errno {
				t.Errorf("%s: errno %d (%s), want %d", tc.what, e, words, tc.errno)
			}
		}
		rfd, _ := memfd(t, 128+64*32)
		cq := le.Uint32(p.ok(opCreateCQ, 0, u32s(64, 0), rfd))
		if e, _, _ := p.call(opCreateCQ, 0, u32s(48, 0), rfd); e != eINVAL {
			t.Errorf("CQ of 48 entries (not a power of two): errno %d, want EINVAL", e)
		}
		if e, _, _ := p.call(opCreateQP, 0, u32s(pd, cq, cq, 1<<20, 64, 0, 0, 0, 2, 0)); e != eINVAL {
			t.Errorf("QP of 2^20 send WRs: errno %d, want EINVAL", e)
		}
		if e, _, _ := p.call(opCreateQP, 0, u32s(pd, cq, cq, 64, 64, 0, 0, 0, 3, 0)); e != eOPNOTSUPP {
			t.Errorf("a UC QP: errno %d, want EOPNOTSUPP", e)
		}
		qp := le.Uint32(p.ok(opCreateQP, 0, u32s(pd, cq, cq, 64, 64, 0, 0, 0, 2, 0)))
		if e, words, _ := p.call(opModifyQP, qp, modify(1, 3, 0, 0, 0, 0, [16]byte{})); e != eINVAL || !strings.Contains(words, "RESET") {
			t.Errorf("RESET to RTS: errno %d %q, want EINVAL naming the states", e, words)
		}
		if e, _, _ := p.call(99, 0, nil); e != eOPNOTSUPP {
			t.Errorf("unknown request: errno %d, want EOPNOTSUPP", e)
		}
	})

	t.Run("write places data with no call from the program", func(t *testing.T) {
		a, b := open(t, apiA), open(t, apiB)
		connect(t, a, b, "10.1.2.1")
		connect(t, b, a, "10.1.1.1")
		for i := range 10000 {
			a.mem[i] = byte(i * 7)
		}
		a.p.post(opPostSend, a.qp, writeWR(1, a.addr, 10000, a.lkey, b.addr+100, b.rkey))
		if st, op, id := a.poll(t, 10*time.Second); st != 0 || op != 1 || id != 1 {
			t.Fatalf("write completion: status %d opcode %d wr_id %d, want success, RDMA_WRITE, 1", st, op, id)
		}
		if !bytes.Equal(b.mem[100:10100], a.mem[:10000]) {
			t.Error("the written bytes are not in the target program's memory")
		}
		// A wrong rkey, or a range past the region, is the responder's
		// remote access error: the requester completes with
		// IBV_WC_REM_ACCESS_ERR, its QP goes to ERR, and a WR posted
		// then is flushed.
		for _, tc := range []struct {
			what   string
			offset uint64
			badKey bool
		}{{"a bad rkey", 0, true}, {"a range past the region", 1<<16 - 50, false}} {
			a, b := open(t, apiA), open(t, apiB)
			connect(t, a, b, "10.1.2.1")
			connect(t, b, a, "10.1.1.1")
			rkey := b.rkey
			if tc.badKey {
				rkey ^= 1
			}
			a.p.post(opPostSend, a.qp, writeWR(2, a.addr, 100, a.lkey, b.addr+tc.offset, rkey))
			if st, _, id := a.poll(t, 10*time.Second); st != 10 || id != 2 {
				t.Errorf("write with %s: status %d wr_id %d, want 10 (remote access error), 2", tc.what, st, id)
			}
			_, _, out := a.p.call(opQueryQP, a.qp, nil)
			if st := le.Uint32(out); st != 6 {
				t.Errorf("QP after a remote access error: state %d, want 6 (ERR)", st)
			}
			a.p.post(opPostSend, a.qp, writeWR(3, a.addr, 100, a.lkey, b.addr, b.rkey))
			if st, _, id := a.poll(t, 10*time.Second); st != 5 || id != 3 {
				t.Errorf("write on a QP in ERR: status %d wr_id %d, want 5 (flushed), 3", st, id)
			}
		}
	})
}
