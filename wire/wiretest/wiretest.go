// Package wiretest builds the packets and frames that tests on every floor
// send: a RoCEv2 descriptor with the common fields set, its bytes, and a
// PFC frame.
package wiretest

import (
	"net/netip"
	"testing"

	"github.com/rocelab/rocelab/wire"
)

// HostIP is host i's address in the tests' fabrics: 10.0.i>>8.i.
func HostIP(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}) }

// RoCE returns a RoCEv2 descriptor from src to dst with what the tests
// share: 1000 bytes, IPv4, DSCP 26 (the lossless class of the default
// switch configuration), ECT(0), TTL 64, UDP to port 4791. A test sets
// the opcode, queue pair, PSN and source port it needs.
func RoCE(src, dst netip.Addr) *wire.Packet {
	return &wire.Packet{
		Kind: wire.KindRoCE, Len: 1000, IPVersion: 4,
		SrcIP: src, DstIP: dst,
		DSCP: 26, ECN: wire.ECNECT0, TTL: 64, Protocol: 17, DstPort: wire.RoCEPort,
	}
}

// Frame builds the frame p describes with payload zero bytes.
func Frame(tb testing.TB, p *wire.Packet, payload int) []byte {
	tb.Helper()
	f, err := wire.BuildFrame(p, make([]byte, payload))
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// PFC builds an 802.1Qbb PFC frame from src pausing priority prio for
// quanta (0 resumes it).
func PFC(tb testing.TB, src [6]byte, prio int, quanta uint16) []byte {
	tb.Helper()
	p := wire.Packet{Kind: wire.KindPFC, SrcMAC: src, ClassEnable: 1 << prio}
	p.Quanta[prio] = quanta
	return Frame(tb, &p, 0)
}
