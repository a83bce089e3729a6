package afpacket_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/afpacket"
	"github.com/rocelab/rocelab/lab/emulation/runtime/netns"
	"github.com/vishvananda/netlink"
)

// chain is generator namespace G, middle M and sink S, joined by veths
// G-M and M-S. The middle forwards, with a userspace loop over two Conns
// (forwarder) or with a kernel bridge.
type chain struct {
	gen, sink *afpacket.Conn
	stop      func()
}

func newChain(tb testing.TB, mode string) *chain {
	tb.Helper()
	g, m, s := newNS(tb, "g"), newNS(tb, "m"), newNS(tb, "s")
	gIf, m1 := newVeth(tb, g, m, 0)
	m2, sIf := newVeth(tb, m, s, 0)
	c := &chain{gen: open(tb, g, gIf, nil), sink: open(tb, s, sIf, nil), stop: func() {}}
	switch mode {
	case "forwarder":
		in, out := open(tb, m, m1, nil), open(tb, m, m2, nil)
		c.stop = forward(tb, in, out)
	case "forwarder-ring":
		in, out := open(tb, m, m1, &afpacket.Config{RxRing: 4 << 20}), open(tb, m, m2, nil)
		c.stop = forward(tb, in, out)
	case "bridge":
		h, err := netns.Handle(m)
		if err != nil {
			tb.Fatal(err)
		}
		defer h.Close()
		br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "rltbr" + uniq(tb, ""), MTU: 9216}}
		if err := h.LinkAdd(br); err != nil {
			tb.Fatal(err)
		}
		for _, p := range []string{m1, m2} {
			l, err := h.LinkByName(p)
			if err == nil {
				err = h.LinkSetMaster(l, br)
			}
			if err != nil {
				tb.Fatal(err)
			}
		}
		if err := h.LinkSetUp(br); err != nil {
			tb.Fatal(err)
		}
	default:
		tb.Fatalf("unknown mode %q", mode)
	}
	tb.Cleanup(c.stop)
	return c
}

// forward runs the userspace forwarder from in to out until stop is called.
func forward(tb testing.TB, in, out *afpacket.Conn) (stop func()) {
	p, err := afpacket.NewPoller()
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.Add(in, 0); err != nil {
		tb.Fatal(err)
	}
	var quit atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		bufs := make([][]byte, 64)
		for i := range bufs {
			bufs[i] = make([]byte, 9300)
		}
		lens := make([]int, len(bufs))
		frames := make([][]byte, len(bufs))
		var ready []int
		for !quit.Load() {
			n, err := in.ReadBatch(bufs, lens)
			if err != nil {
				return
			}
			if n == 0 {
				if ready, _, err = p.Wait(afpacket.Forever, ready); err != nil {
					return
				}
				continue
			}
			for i := range n {
				frames[i] = bufs[i][:lens[i]]
			}
			if _, err := out.WriteBatch(frames[:n]); err != nil && !errors.Is(err, afpacket.ErrClosed) {
				tb.Error(err)
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			quit.Store(true)
			p.Wake()
			wg.Wait()
			p.Close()
		})
	}
}

// run sends n frames of size bytes from the generator (batches of 64;
// with pace, waiting for each batch to arrive before the next) and counts
// test frames at the sink until all arrived or the sink was idle for
// 300 ms. It returns the count and the time from first send to last
// arrival.
func (c *chain) run(tb testing.TB, n, size int, pace bool) (int, time.Duration) {
	tb.Helper()
	batch := make([][]byte, 64)
	for i := range batch {
		batch[i] = frame(c.sink.HardwareAddr(), c.gen.HardwareAddr(), size, uint32(i))
	}
	var got atomic.Int64
	var last atomic.Int64
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		bufs := make([][]byte, 64)
		for i := range bufs {
			bufs[i] = make([]byte, 9300)
		}
		lens := make([]int, len(bufs))
		idle := time.Now()
		for got.Load() < int64(n) && time.Since(idle) < 300*time.Millisecond {
			k, err := c.sink.ReadBatch(bufs, lens)
			if err != nil {
				tb.Error(err)
				return
			}
			if k == 0 {
				c.sink.Wait(20 * time.Millisecond)
				continue
			}
			cnt := 0
			for i := range k {
				if isTest(bufs[i][:lens[i]]) {
					cnt++
				}
			}
			got.Add(int64(cnt))
			last.Store(int64(time.Since(start)))
			idle = time.Now()
		}
	}()
	for sent := 0; sent < n; {
		k := min(len(batch), n-sent)
		if _, err := c.gen.WriteBatch(batch[:k]); err != nil {
			tb.Fatal(err)
		}
		sent += k
		for pace && got.Load() < int64(sent) {
			select {
			case <-done:
				sent = n
			default:
				time.Sleep(50 * time.Microsecond)
				continue
			}
			break
		}
	}
	<-done
	return int(got.Load()), time.Duration(last.Load())
}

// TestForwarderDelivers checks the benchmark's forwarder: every frame of
// a paced stream crosses G → M → S.
func TestForwarderDelivers(t *testing.T) {
	for _, mode := range []string{"forwarder", "forwarder-ring", "bridge"} {
		t.Run(mode, func(t *testing.T) {
			c := newChain(t, mode)
			const n = 2000
			if got, _ := c.run(t, n, 1500, true); got != n {
				t.Errorf("sink got %d of %d frames", got, n)
			}
		})
	}
}

// BenchmarkForward compares the userspace AF_PACKET forwarder with the
// kernel bridge, each between a generator and a sink namespace, at 64 and
// 1500 bytes. It reports delivered packets per second ("pps") and the
// share the sink did not get ("loss%"): the generator sends as fast as it
// can, so pps is the forwarding capacity of the middle.
func BenchmarkForward(b *testing.B) {
	for _, mode := range []string{"forwarder", "forwarder-ring", "bridge"} {
		for _, size := range []int{64, 1500} {
			b.Run(fmt.Sprintf("%s/%dB", mode, size), func(b *testing.B) {
				c := newChain(b, mode)
				c.run(b, 1000, size, true) // warm up (bridge learning, caches)
				b.ResetTimer()
				got, d := c.run(b, b.N, size, false)
				b.StopTimer()
				if got == 0 || d == 0 {
					b.Fatal("nothing delivered")
				}
				b.ReportMetric(float64(got)/d.Seconds(), "pps")
				b.ReportMetric(100*float64(b.N-got)/float64(b.N), "loss%")
			})
		}
	}
}
