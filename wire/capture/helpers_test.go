package capture

import (
	"net/netip"
	"testing"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/wire"
)

// baseSpec is a RoCEv2 SEND Only between two IPv4 addresses.
func baseSpec() wire.Packet {
	return wire.Packet{Kind: wire.KindRoCE, Opcode: uint8(wire.OpSendOnly), SrcIP: netip.MustParseAddr("10.0.0.1"),
		DstIP: netip.MustParseAddr("10.0.0.2"), BTHControl: wire.BTHControl{PKey: wire.DefaultPKey}, DestQP: 17, PSN: 5, DSCP: 26, ECN: wire.ECNECT0}
}

// benchSpec is a 1 KiB RDMA WRITE Only on VLAN 100.
func benchSpec() (wire.Packet, []byte) {
	p := baseSpec()
	p.Opcode = uint8(wire.OpWriteOnly)
	p.HasVLAN, p.PCP, p.VLANID = true, 3, 100
	p.VA, p.RKey, p.DMALen = 0x7f0000001000, 0x1234, 1024
	return p, pattern(1024)
}

// cnpConnectX4 is a CNP a ConnectX-4 sent (the capture wire's decode
// tests describe byte by byte).
const cnpConnectX4 = "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a001201000012b7002800008100ffff40000118000000000000000000000000000000000000000082fd002a"

// pattern returns n recognisable payload bytes.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	return b
}

// addSeeds adds the samples and the real NIC's CNP to a fuzz corpus.
func addSeeds(f *testing.F) {
	samples, err := wire.Samples()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range samples {
		f.Add(s.Frame)
	}
	f.Add(testenv.MustHex(f, cnpConnectX4))
}
