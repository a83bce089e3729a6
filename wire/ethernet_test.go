package wire

import "testing"

// TestMessageOnWire: per packet Ethernet 14 + FCS 4 + preamble 8 + IFG 12
// + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 = 82 bytes around the payload, the
// first packet's extension headers, and the 64-byte minimum frame. At a
// 4096-byte path MTU a 400G link carries at most 392.15 Gb/s of WRITE
// payload.
func TestMessageOnWire(t *testing.T) {
	for _, tc := range []struct {
		name                string
		size, mtu, firstExt int
		want                int
	}{
		{"one full packet, WRITE", 4096, 4096, RETHLen, 4096 + 82 + 16},
		{"16 packets, WRITE", 65536, 4096, RETHLen, 16*(4096+82) + 16},
		{"partial last packet", 5000, 4096, 0, 4096 + 82 + 904 + 82},
		{"empty SEND: a minimum frame", 0, 4096, 0, 64 + 8 + 12},
		{"small SEND, at the minimum frame", 2, 4096, 0, 84},
		{"small WRITE", 2, 4096, RETHLen, 58 + 16 + 2 + 4 + 20},
		{"no MTU: one packet", 9000, 0, 0, 9000 + 82},
	} {
		if got := MessageOnWire(tc.size, tc.mtu, tc.firstExt); got != tc.want {
			t.Errorf("%s: MessageOnWire(%d, %d, %d) = %d, want %d", tc.name, tc.size, tc.mtu, tc.firstExt, got, tc.want)
		}
	}
	const size = 1 << 20
	gbps := 400 * float64(size) / float64(MessageOnWire(size, 4096, RETHLen))
	if gbps < 392.1 || gbps > 392.2 {
		t.Errorf("400G at MTU 4096 carries %.3f Gb/s of 1 MiB WRITEs, want about 392.15", gbps)
	}
}
