package capture

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/rocelab/rocelab/wire"
)

func TestReadCapture(t *testing.T) {
	samples, err := wire.Samples()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := wire.WriteSamplesPcap(&buf); err != nil {
		t.Fatal(err)
	}
	// Append one frame with a broken ICRC and one cut short.
	bad := bytes.Clone(samples[0].Frame)
	bad[len(bad)-5] ^= 0xFF // inside the payload, covered by the ICRC
	w := pcapgo.NewWriter(&buf)
	for _, f := range [][]byte{bad, samples[0].Frame[:40]} {
		if err := w.WritePacket(gopacket.CaptureInfo{CaptureLength: len(f), Length: len(f)}, f); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	err = Read(&buf, func(d *Decoded) error {
		s := d.ICRC.String()
		if d.Err != nil {
			s = "error"
		}
		got = append(got, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, s := range samples {
		if s.Spec.Kind == wire.KindRoCE || s.Spec.Kind == wire.KindCNP {
			want = append(want, "ok")
		} else {
			want = append(want, "-")
		}
	}
	want = append(want, "bad", "error")
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("statuses\n got %v\nwant %v", got, want)
	}
}

func TestReadCapturePcapng(t *testing.T) {
	samples, _ := wire.Samples()
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriter(&buf, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples[:3] {
		if err := w.WritePacket(gopacket.CaptureInfo{CaptureLength: len(s.Frame), Length: len(s.Frame), InterfaceIndex: 0}, s.Frame); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	n := 0
	err = Read(&buf, func(d *Decoded) error {
		n++
		if d.Err != nil || d.ICRC != ICRCOK {
			t.Errorf("frame %d: %v %v", d.Number, d.Err, d.ICRC)
		}
		return nil
	})
	if err != nil || n != 3 {
		t.Errorf("Read: %v, %d frames", err, n)
	}
}

func TestReadCaptureNotACapture(t *testing.T) {
	if err := Read(strings.NewReader("this is not a pcap file"), func(*Decoded) error { return nil }); err == nil {
		t.Error("Read accepted text")
	}
}
