package pcap

import (
	"bytes"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// TestReadByPcapgo: gopacket's reader (as tshark would) reads back every
// frame with its time to the nanosecond, its captured bytes cut at the
// snapshot length and its wire length.
func TestReadByPcapgo(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, 64)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 123_456_789)
	frames := []struct {
		data    []byte
		wireLen int
	}{
		{bytes.Repeat([]byte{1}, 60), 0},
		{bytes.Repeat([]byte{2}, 100), 0},   // cut at 64
		{bytes.Repeat([]byte{3}, 64), 1500}, // a frame captured short
	}
	for i, f := range frames {
		if err := w.WriteFrame(t0.Add(time.Duration(i)*time.Nanosecond), f.data, f.wireLen); err != nil {
			t.Fatal(err)
		}
	}
	r, err := pcapgo.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// (Not r.Resolution(): gopacket v1.1.19 reports microseconds for a
	// nanosecond file; the timestamps below are the check.)
	if r.LinkType() != layers.LinkTypeEthernet || r.Snaplen() != 64 {
		t.Fatalf("header: link %v snaplen %d", r.LinkType(), r.Snaplen())
	}
	for i, f := range frames {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		wantLen := max(f.wireLen, len(f.data))
		want := f.data[:min(len(f.data), 64)]
		if !ci.Timestamp.Equal(t0.Add(time.Duration(i))) || !bytes.Equal(data, want) || ci.CaptureLength != len(want) || ci.Length != wantLen {
			t.Errorf("frame %d: at %v, %d of %d bytes, want %v, %d of %d", i, ci.Timestamp, ci.CaptureLength, ci.Length, t0.Add(time.Duration(i)), len(want), wantLen)
		}
	}
	if _, err := NewWriter(&buf, 0); err == nil {
		t.Error("snapshot length 0 accepted")
	}
}
