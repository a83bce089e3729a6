package capture

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/rocelab/rocelab/wire"
)

// ICRCStatus says what a capture reader found about a frame's ICRC.
type ICRCStatus uint8

// ICRC statuses.
const (
	ICRCNotApplicable ICRCStatus = iota // not a RoCEv2 frame, or it did not decode
	ICRCOK                              // carried ICRC matches
	ICRCBad                             // carried ICRC differs from the computed one
)

// String returns "-", "ok" or "bad".
func (s ICRCStatus) String() string {
	switch s {
	case ICRCOK:
		return "ok"
	case ICRCBad:
		return "bad"
	}
	return "-"
}

// Decoded is one frame of a capture as the codecs read it.
type Decoded struct {
	Number    int         // 1-based frame number in the capture
	Timestamp time.Time   // capture time
	CapLen    int         // bytes captured
	WireLen   int         // bytes on the wire
	Packet    wire.Packet // the descriptor (Raw points into a buffer reused for the next frame)
	Err       error       // decode error, if any
	ICRC      ICRCStatus
	// CarriedICRC and ComputedICRC are set when ICRC is not ICRCNotApplicable.
	CarriedICRC, ComputedICRC uint32
}

// packetSource reads frames from a pcap or pcapng capture.
type packetSource interface {
	ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
}

// Read decodes every frame of a pcap or pcapng capture of Ethernet
// frames and calls fn for each, in order; d is reused between calls. It
// stops at the first error fn returns, and returns it.
func Read(r io.Reader, fn func(d *Decoded) error) error {
	br := bufio.NewReader(r)
	magic, err := br.Peek(4)
	if err != nil {
		return fmt.Errorf("read capture: %w", err)
	}
	var src packetSource
	var link layers.LinkType
	if binary.LittleEndian.Uint32(magic) == 0x0A0D0D0A { // pcapng section header block
		ng, err := pcapgo.NewNgReader(br, pcapgo.DefaultNgReaderOptions)
		if err != nil {
			return fmt.Errorf("read pcapng: %w", err)
		}
		src, link = ng, ng.LinkType()
	} else {
		pr, err := pcapgo.NewReader(br)
		if err != nil {
			return fmt.Errorf("read pcap: %w", err)
		}
		src, link = pr, pr.LinkType()
	}
	if link != layers.LinkTypeEthernet {
		return fmt.Errorf("read capture: link type %v, want Ethernet", link)
	}
	var d Decoded
	for n := 1; ; n++ {
		data, ci, err := src.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read frame %d: %w", n, err)
		}
		d = Decoded{Number: n, Timestamp: ci.Timestamp, CapLen: ci.CaptureLength, WireLen: ci.Length}
		d.Err = d.Packet.Decode(data)
		if d.Err == nil && (d.Packet.Kind == wire.KindRoCE || d.Packet.Kind == wire.KindCNP) {
			c, carried, err := d.Packet.ICRC()
			switch {
			case err != nil:
				d.Err = err
			case c == carried:
				d.ICRC = ICRCOK
			default:
				d.ICRC = ICRCBad
			}
			d.ComputedICRC, d.CarriedICRC = c, carried
		}
		if err := fn(&d); err != nil {
			return err
		}
	}
}
