package afpacket_test

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns/netnstest"
	"github.com/rocelab/rocelab/lab/emulation/datapath/links/linkstest"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/datapath/afpacket"
)

// recvTest reads test frames from c until want arrived or the deadline.
func recvTest(t *testing.T, c *afpacket.Conn, want int, bufSize int) [][]byte {
	t.Helper()
	bufs := make([][]byte, 32)
	for i := range bufs {
		bufs[i] = make([]byte, bufSize)
	}
	lens := make([]int, len(bufs))
	var got [][]byte
	deadline := time.Now().Add(3 * time.Second)
	for len(got) < want && time.Now().Before(deadline) {
		if _, err := c.Wait(50 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		n, err := c.ReadBatch(bufs, lens)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if f := bufs[i][:lens[i]]; isTest(f) {
				got = append(got, bytes.Clone(f))
			}
		}
	}
	return got
}

// rxModes are the two ways a Conn receives: recvmmsg, and the
// memory-mapped ring (Config.RxRing). Receive tests run under both.
var rxModes = []struct {
	name string
	cfg  *afpacket.Config
}{{"mmsg", nil}, {"ring", &afpacket.Config{RxRing: 4 << 20}}}

// eachRxMode runs f once per receive mode, with that mode's Config for
// the receiving Conn.
func eachRxMode(t *testing.T, f func(t *testing.T, rx *afpacket.Config)) {
	for _, m := range rxModes {
		t.Run(m.name, func(t *testing.T) { f(t, m.cfg) })
	}
}

func TestSendReceiveInOrder(t *testing.T) { eachRxMode(t, testSendReceiveInOrder) }

func testSendReceiveInOrder(t *testing.T, rx *afpacket.Config) {
	a, b := netnstest.NewUnique(t, "a"), netnstest.NewUnique(t, "b")
	ia, ib := linkstest.Pair(t, a, b, 9216)
	ca, cb := open(t, a, ia, nil), open(t, b, ib, rx)
	// A second socket on A that does see outgoing frames: the control for
	// PACKET_IGNORE_OUTGOING.
	spy := open(t, a, ia, &afpacket.Config{SeeOutgoing: true})

	sizes := []int{60, 64, 65, 128, 511, 1500, 1514, 1518, 4000, 8999, 9000, 9014, 9230}
	var frames [][]byte
	for round := range 20 {
		for _, s := range sizes {
			frames = append(frames, frame(cb.HardwareAddr(), ca.HardwareAddr(), s, uint32(len(frames)+round)))
		}
	}
	for i := 0; i < len(frames); i += 50 {
		n, err := ca.WriteBatch(frames[i:min(i+50, len(frames))])
		if err != nil || n != min(50, len(frames)-i) {
			t.Fatalf("WriteBatch = %d, %v", n, err)
		}
	}
	got := recvTest(t, cb, len(frames), 9300)
	if len(got) != len(frames) {
		t.Fatalf("received %d frames, want %d", len(got), len(frames))
	}
	for i := range frames {
		if !bytes.Equal(got[i], frames[i]) {
			t.Fatalf("frame %d (%d bytes): received %d bytes, differ", i, len(frames[i]), len(got[i]))
		}
	}
	if s := ca.Stats(); s.TxFrames != uint64(len(frames)) || s.TxDropped != 0 {
		t.Errorf("sender stats %+v", s)
	}
	if s := cb.Stats(); s.Truncated != 0 || s.KernelDrops != 0 {
		t.Errorf("receiver stats %+v", s)
	}

	// The spy saw our transmissions; the sender's own socket did not.
	if seen := recvTest(t, spy, len(frames), 9300); len(seen) != len(frames) {
		t.Errorf("socket without PACKET_IGNORE_OUTGOING saw %d of %d sent frames", len(seen), len(frames))
	}
	bufs, lens := [][]byte{make([]byte, 9300)}, []int{0}
	for {
		n, err := ca.ReadBatch(bufs, lens)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if isTest(bufs[0][:lens[0]]) {
			t.Fatal("sender read back its own frame despite PACKET_IGNORE_OUTGOING")
		}
	}
}

func TestVLANTagKept(t *testing.T) { eachRxMode(t, testVLANTagKept) }

func testVLANTagKept(t *testing.T, rx *afpacket.Config) {
	a, b := netnstest.NewUnique(t, "a"), netnstest.NewUnique(t, "b")
	ia, ib := linkstest.Pair(t, a, b, 0)
	ca, cb := open(t, a, ia, nil), open(t, b, ib, rx)
	f := frame(cb.HardwareAddr(), ca.HardwareAddr(), 200, 7)
	// 802.1Q, PCP 3, VID 100, then the test EtherType.
	tagged := append(append(append([]byte{}, f[:12]...), 0x81, 0x00, 0x60, 0x64), f[12:]...)
	if _, err := ca.WriteBatch([][]byte{tagged}); err != nil {
		t.Fatal(err)
	}
	bufs, lens := [][]byte{make([]byte, 300)}, []int{0}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		cb.Wait(50 * time.Millisecond)
		n, err := cb.ReadBatch(bufs, lens)
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 && lens[0] == len(tagged) {
			if !bytes.Equal(bufs[0][:lens[0]], tagged) {
				t.Fatalf("tagged frame changed:\n got %x\nwant %x", bufs[0][:lens[0]], tagged)
			}
			return
		}
	}
	t.Fatal("tagged frame not received")
}

func TestTruncated(t *testing.T) { eachRxMode(t, testTruncated) }

func testTruncated(t *testing.T, rx *afpacket.Config) {
	a, b := netnstest.NewUnique(t, "a"), netnstest.NewUnique(t, "b")
	ia, ib := linkstest.Pair(t, a, b, 0)
	ca, cb := open(t, a, ia, nil), open(t, b, ib, rx)
	f := frame(cb.HardwareAddr(), ca.HardwareAddr(), 1000, 1)
	if _, err := ca.WriteBatch([][]byte{f}); err != nil {
		t.Fatal(err)
	}
	got := recvTest(t, cb, 1, 100)
	if len(got) != 1 || !bytes.Equal(got[0], f[:100]) {
		t.Fatalf("got %d frames", len(got))
	}
	if s := cb.Stats(); s.Truncated != 1 {
		t.Errorf("Truncated = %d, want 1", s.Truncated)
	}
}

func TestPoller(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("keep processor %v", keep), func(t *testing.T) { testPoller(t, keep) })
	}
}

// TestPollerKeepsProcessorLetsGCRun: a Poller that keeps its processor
// blocks in a raw system call, yet the garbage collector, which must stop
// every goroutine, still completes while it waits with no timeout (the
// runtime's preemption signal ends the wait early and the goroutine stops
// on its way back in), and a Wake still ends the wait.
func TestPollerKeepsProcessorLetsGCRun(t *testing.T) {
	p, err := afpacket.NewPoller()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.SetKeepProcessor(true)
	type result struct {
		woken bool
		err   error
	}
	got := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		_, woken, err := p.Wait(afpacket.Forever, nil)
		got <- result{woken, err}
	}()
	time.Sleep(20 * time.Millisecond) // into its wait
	gc := make(chan struct{})
	go func() { runtime.GC(); close(gc) }()
	select {
	case <-gc:
	case r := <-got:
		t.Fatalf("Wait(Forever) returned before a Wake: woken %v, %v", r.woken, r.err)
	case <-time.After(30 * time.Second):
		t.Fatal("the garbage collector did not complete while the Poller waited holding its processor")
	}
	if err := p.Wake(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.err != nil || !r.woken {
			t.Fatalf("Wait after Wake: woken %v, %v", r.woken, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Wake did not end the wait")
	}
}

func testPoller(t *testing.T, keep bool) {
	a, b := netnstest.NewUnique(t, "a"), netnstest.NewUnique(t, "b")
	ia, ib := linkstest.Pair(t, a, b, 0)
	ca, cb := open(t, a, ia, nil), open(t, b, ib, nil)
	p, err := afpacket.NewPoller()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.SetKeepProcessor(keep)
	if err := p.Add(ca, 1); err != nil {
		t.Fatal(err)
	}
	if err := p.Add(cb, 2); err != nil {
		t.Fatal(err)
	}
	drain := func() {
		bufs, lens := [][]byte{make([]byte, 2000)}, []int{0}
		for _, c := range []*afpacket.Conn{ca, cb} {
			for n, _ := c.ReadBatch(bufs, lens); n > 0; n, _ = c.ReadBatch(bufs, lens) {
			}
		}
	}
	drain()

	start := time.Now()
	ready, woken, err := p.Wait(20*time.Millisecond, nil)
	if err != nil || woken || len(ready) != 0 {
		t.Fatalf("idle Wait = %v, %v, %v", ready, woken, err)
	}
	if d := time.Since(start); d < 15*time.Millisecond {
		t.Errorf("Wait(20ms) returned after %v", d)
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(10 * time.Millisecond)
		p.Wake()
	}()
	ready, woken, err = p.Wait(afpacket.Forever, ready)
	<-done
	if err != nil || !woken {
		t.Fatalf("Wait after Wake = %v, woken %v, %v", ready, woken, err)
	}

	if _, err := ca.WriteBatch([][]byte{frame(cb.HardwareAddr(), ca.HardwareAddr(), 100, 1)}); err != nil {
		t.Fatal(err)
	}
	ready, _, err = p.Wait(2*time.Second, ready)
	if err != nil || len(ready) != 1 || ready[0] != 2 {
		t.Fatalf("Wait after send = %v, %v (want [2])", ready, err)
	}
	// WaitQuiet sleeps through the pending frame, then reports it; a Wake
	// still ends it early.
	start = time.Now()
	ready, woken, err = p.WaitQuiet(20*time.Millisecond, ready)
	if err != nil || woken || len(ready) != 1 || ready[0] != 2 {
		t.Fatalf("WaitQuiet with a frame pending = %v, woken %v, %v (want [2])", ready, woken, err)
	}
	if d := time.Since(start); d < 15*time.Millisecond {
		t.Errorf("WaitQuiet(20ms) returned after %v: it woke for the frame", d)
	}
	done = make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(10 * time.Millisecond)
		p.Wake()
	}()
	ready, woken, err = p.WaitQuiet(time.Minute, ready)
	<-done
	if err != nil || !woken || len(ready) != 1 {
		t.Fatalf("WaitQuiet after Wake = %v, woken %v, %v", ready, woken, err)
	}
	if err := p.Remove(cb); err != nil {
		t.Fatal(err)
	}
	if err := ca.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.ReadBatch([][]byte{make([]byte, 10)}, []int{0}); !errors.Is(err, afpacket.ErrClosed) {
		t.Errorf("ReadBatch after Close = %v", err)
	}
}

// TestRingOverflow fills a small receive ring before reading: the frames
// that found it full are counted as kernel drops, and the ring still
// delivers what it holds, in order, and what comes after.
func TestRingOverflow(t *testing.T) {
	a, b := netnstest.NewUnique(t, "a"), netnstest.NewUnique(t, "b")
	ia, ib := linkstest.Pair(t, a, b, 1500)
	ca, cb := open(t, a, ia, nil), open(t, b, ib, &afpacket.Config{RxRing: 1 << 16})
	var frames [][]byte
	for i := range 200 {
		frames = append(frames, frame(cb.HardwareAddr(), ca.HardwareAddr(), 1000, uint32(i)))
	}
	if _, err := ca.WriteBatch(frames); err != nil {
		t.Fatal(err)
	}
	got := recvTest(t, cb, len(frames), 2048)
	s := cb.Stats()
	if len(got) == 0 || len(got) >= len(frames) || s.KernelDrops != uint64(len(frames)-len(got)) {
		t.Fatalf("received %d of %d frames, %d kernel drops: want a full ring and the rest counted", len(got), len(frames), s.KernelDrops)
	}
	for i, f := range got {
		if !bytes.Equal(f, frames[i]) {
			t.Fatalf("frame %d differs", i)
		}
	}
	after := frame(cb.HardwareAddr(), ca.HardwareAddr(), 1000, 999)
	if _, err := ca.WriteBatch([][]byte{after}); err != nil {
		t.Fatal(err)
	}
	if got := recvTest(t, cb, 1, 2048); len(got) != 1 || !bytes.Equal(got[0], after) {
		t.Fatalf("after the overflow: got %d frames", len(got))
	}
}

// TestOpenReadsInterface checks the interface facts Open reads with
// ioctls against what netlink reports, and that a missing interface fails.
func TestOpenReadsInterface(t *testing.T) {
	a, b := netnstest.NewUnique(t, "ia"), netnstest.NewUnique(t, "ib")
	ea, _ := linkstest.Pair(t, a, b, 4000)
	c, err := afpacket.Open(a, ea, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h, err := netns.Handle(a)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	l, err := h.LinkByName(ea)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.HardwareAddr().String(), l.Attrs().HardwareAddr.String(); got != want || got == "" {
		t.Errorf("MAC %q, want %q", got, want)
	}
	if _, err := afpacket.Open(a, "rlnosuchif", nil); err == nil {
		t.Error("Open of a missing interface succeeded")
	}
	lo, err := afpacket.Open(a, "lo", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lo.Close()
	if lo.HardwareAddr() != nil {
		t.Errorf("lo: MAC %v, want none", lo.HardwareAddr())
	}
}
