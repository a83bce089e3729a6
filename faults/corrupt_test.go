package faults

import (
	"bytes"
	"testing"

	"github.com/rocelab/rocelab/wire"
)

// TestCorruptRaw: frames built by wire.BuildFrame (IPv4 and IPv6) pass
// through corrupt 30 % with 1 and 3 bit flips: every frame whose bytes
// changed fails wire.VerifyICRC, every other passes, the changed count
// equals the corrupted counter, and the sender's buffer is untouched.
func TestCorruptRaw(t *testing.T) {
	for _, bits := range []int{1, 3} {
		for _, v6 := range []bool{false, true} {
			var rec recorder
			c := NewCorrupt(Corruption{P: 0.3, Bits: bits}, rng(uint64(bits)))
			c.SetNext(&rec)
			const n = 3000
			var orig [][]byte
			var sent [][]byte
			for i := range n {
				p := rawRoCE(t, uint32(i), v6, 64+i%900)
				orig = append(orig, append([]byte(nil), p.Raw...))
				sent = append(sent, p.Raw)
				c.Receive(p)
			}
			var changed, failed int64
			for i, p := range rec.pkts {
				if !bytes.Equal(sent[i], orig[i]) {
					t.Fatalf("sender's buffer %d was modified", i)
				}
				err := wire.VerifyICRC(p.Raw)
				if !bytes.Equal(p.Raw, orig[i]) {
					changed++
					if err == nil {
						t.Errorf("bits %d v6 %v: corrupted frame %d passes ICRC", bits, v6, i)
					}
				} else if err != nil {
					t.Errorf("untouched frame %d fails ICRC: %v", i, err)
				}
				if err != nil {
					failed++
				}
			}
			st := c.Stats()
			if len(rec.pkts) != n || st.Corrupted != changed || st.Dropped != 0 || changed < n/4 || changed > n*35/100 {
				t.Errorf("bits %d v6 %v: delivered %d, corrupted counter %d, changed %d, dropped %d", bits, v6, len(rec.pkts), st.Corrupted, changed, st.Dropped)
			}
			t.Logf("bits %d v6 %v: %d of %d corrupted, %d fail ICRC", bits, v6, changed, n, failed)
		}
	}
}

// TestCorruptDescriptor: packets without bytes cannot carry a flipped bit,
// so a corrupted one is dropped and counted both corrupted and dropped.
func TestCorruptDescriptor(t *testing.T) {
	var rec recorder
	c := NewCorrupt(Corruption{P: 0.5}, rng(9))
	c.SetNext(&rec)
	const n = 10000
	for i := range n {
		c.Receive(roce(uint32(i)))
	}
	st := c.Stats()
	if st.Corrupted != st.Dropped || int64(len(rec.got))+st.Dropped != n || st.Dropped < 4700 || st.Dropped > 5300 {
		t.Errorf("corrupted %d, dropped %d, delivered %d of %d", st.Corrupted, st.Dropped, len(rec.got), n)
	}
}
