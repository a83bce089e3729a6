package afpacket_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/rocelab/rocelab/lab/emulation/afpacket"
	"github.com/rocelab/rocelab/lab/emulation/links"
	"github.com/rocelab/rocelab/lab/emulation/runtime/netns/netnstest"
)

// testEtherType is the IEEE local experimental EtherType 1.
const testEtherType = 0x88b5

var seq = rand.Uint32() // distinguishes parallel runs of the same binary

// names returns a unique namespace and interface name stem.
func uniq(tb testing.TB, tag string) string {
	tb.Helper()
	seq++
	return fmt.Sprintf("%x%x%s", os.Getpid()&0xfffff, seq&0xff, tag)
}

// newNS creates a unique namespace, removed at cleanup.
func newNS(tb testing.TB, tag string) string {
	tb.Helper()
	return netnstest.New(tb, "rltest-"+uniq(tb, tag))
}

// newVeth joins namespaces a and b with a veth (offloads off, no IPv6)
// and returns the two interface names.
func newVeth(tb testing.TB, a, b string, mtu int) (string, string) {
	tb.Helper()
	id := uniq(tb, "")
	ea, eb := "rlta"+id, "rltb"+id
	v := links.Veth{
		A:   links.End{NetNS: a, Name: ea, NoIPv6: true},
		B:   links.End{NetNS: b, Name: eb, NoIPv6: true},
		MTU: mtu,
	}
	if err := links.Create(v); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := links.Delete(a, ea); err != nil {
			tb.Error(err)
		}
	})
	return ea, eb
}

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
