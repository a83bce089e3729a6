package afpacket_test

import (
	"testing"

	"github.com/rocelab/rocelab/lab/emulation/datapath/afpacket"
)

// testEtherType is the IEEE local experimental EtherType 1.
const testEtherType = 0x88b5

func open(tb testing.TB, ns, ifname string, cfg *afpacket.Config) *afpacket.Conn {
	tb.Helper()
	c, err := afpacket.Open(ns, ifname, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// frame builds an Ethernet frame of size bytes with the test EtherType
// and a payload stamped with seq.
func frame(dst, src []byte, size int, seq uint32) []byte {
	f := make([]byte, size)
	copy(f, dst)
	copy(f[6:], src)
	f[12], f[13] = testEtherType>>8, testEtherType&0xff
	f[14], f[15], f[16], f[17] = byte(seq>>24), byte(seq>>16), byte(seq>>8), byte(seq)
	for i := 18; i < size; i++ {
		f[i] = byte(i) ^ byte(seq)
	}
	return f
}

func isTest(f []byte) bool {
	return len(f) >= 14 && f[12] == testEtherType>>8 && f[13] == testEtherType&0xff
}
