package afpacket_test

import (
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns/netnstest"
	"github.com/rocelab/rocelab/lab/emulation/datapath/links/linkstest"

	"github.com/rocelab/rocelab/lab/emulation/datapath/afpacket"
)

// TestReceiveTimestamps sends frames in spaced groups, reads them all
// long after, and checks that every frame carries its own kernel receive
// time: monotonic, within a few ms after its send, and not the time of
// the late read.
func TestReceiveTimestamps(t *testing.T) { eachRxMode(t, testReceiveTimestamps) }

func testReceiveTimestamps(t *testing.T, rx *afpacket.Config) {
	a, b := netnstest.NewUnique(t, "a"), netnstest.NewUnique(t, "b")
	ia, ib := linkstest.Pair(t, a, b, 9216)
	ca, cb := open(t, a, ia, nil), open(t, b, ib, rx)

	warmStamps(t, ca, cb)

	const groups, per = 10, 8
	gap := 2 * time.Millisecond
	type sent struct{ before, after time.Time }
	var at []sent
	for g := range groups {
		var fs [][]byte
		for i := range per {
			fs = append(fs, frame(cb.HardwareAddr(), ca.HardwareAddr(), 1000, uint32(g*per+i)))
		}
		before := time.Now()
		if n, err := ca.WriteBatch(fs); err != nil || n != per {
			t.Fatalf("WriteBatch = %d, %v", n, err)
		}
		after := time.Now()
		for range per {
			at = append(at, sent{before, after})
		}
		time.Sleep(gap)
	}
	late := 50 * time.Millisecond
	time.Sleep(late)
	readAt := time.Now()

	bufs := make([][]byte, 16)
	for i := range bufs {
		bufs[i] = make([]byte, 2048)
	}
	lens, stamps := make([]int, 16), make([]int64, 16)
	var got []int64
	var seqs []uint32
	for len(got) < groups*per {
		n, err := cb.ReadBatchStamped(bufs, lens, stamps)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		for i := range n {
			f := bufs[i][:lens[i]]
			if !isTest(f) {
				continue
			}
			seqs = append(seqs, uint32(f[14])<<24|uint32(f[15])<<16|uint32(f[16])<<8|uint32(f[17]))
			got = append(got, stamps[i])
		}
	}
	if len(got) != groups*per {
		t.Fatalf("received %d frames, want %d", len(got), groups*per)
	}
	// The kernel stamps when the sender's transmit hands the frame over;
	// allow scheduling slack on a loaded machine but far less than the
	// late read.
	const slack = 20 * time.Millisecond
	for i, ns := range got {
		if seqs[i] != uint32(i) {
			t.Fatalf("frame %d has sequence %d: out of order", i, seqs[i])
		}
		if ns == 0 {
			t.Fatalf("frame %d: no timestamp", i)
		}
		ts := time.Unix(0, ns)
		if i > 0 && ns < got[i-1] {
			t.Errorf("frame %d stamped %v before frame %d", i, time.Duration(got[i-1]-ns), i-1)
		}
		if ts.Before(at[i].before.Add(-time.Millisecond)) || ts.After(at[i].after.Add(slack)) {
			t.Errorf("frame %d stamped %v after its send started (sent within %v), want within [0, %v]",
				i, ts.Sub(at[i].before), at[i].after.Sub(at[i].before), slack)
		}
		if readAt.Sub(ts) < late-slack/4 {
			t.Errorf("frame %d stamped only %v before the read: stamped at read time?", i, readAt.Sub(ts))
		}
	}
	// Groups are gap apart in the stamps too.
	for g := 1; g < groups; g++ {
		d := time.Duration(got[g*per] - got[g*per-1])
		if d < gap-time.Millisecond/2 {
			t.Errorf("groups %d and %d stamped %v apart, sent at least %v apart", g-1, g, d, gap)
		}
	}
	t.Logf("first stamp %v after its send, spread of a group %v, read %v after the last stamp",
		time.Unix(0, got[0]).Sub(at[0].before), time.Duration(got[per-1]-got[0]), readAt.Sub(time.Unix(0, got[len(got)-1])))

	// NoTimestamps: stamps are 0.
	cn := open(t, b, ib, &afpacket.Config{NoTimestamps: true})
	if n, err := ca.WriteBatch([][]byte{frame(cb.HardwareAddr(), ca.HardwareAddr(), 100, 1)}); err != nil || n != 1 {
		t.Fatalf("WriteBatch = %d, %v", n, err)
	}
	time.Sleep(5 * time.Millisecond)
	for {
		n, err := cn.ReadBatchStamped(bufs, lens, stamps)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatal("NoTimestamps socket read nothing")
		}
		if isTest(bufs[0][:lens[0]]) {
			break
		}
	}
	if stamps[0] != 0 {
		t.Errorf("NoTimestamps: stamp %d, want 0", stamps[0])
	}
}

// warmStamps waits until the kernel stamps frames on arrival: it turns
// receive timestamps on with deferred work a moment after the first
// socket asks, and until then recvmsg stamps frames when they are read.
func warmStamps(t *testing.T, tx, rx *afpacket.Conn) {
	t.Helper()
	bufs, lens, stamps := [][]byte{make([]byte, 2048)}, []int{0}, []int64{0}
	for try := range 100 {
		if _, err := tx.WriteBatch([][]byte{frame(rx.HardwareAddr(), tx.HardwareAddr(), 100, 1<<31)}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
		readAt := time.Now()
		ok := false
		for {
			n, err := rx.ReadBatchStamped(bufs, lens, stamps)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			if isTest(bufs[0][:lens[0]]) && readAt.Sub(time.Unix(0, stamps[0])) > 2*time.Millisecond {
				ok = true
			}
		}
		if ok {
			t.Logf("arrival stamps after %d probes", try+1)
			return
		}
	}
	t.Fatal("the kernel never stamped a frame on arrival")
}
