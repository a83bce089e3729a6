// Package pcap writes captures in the libpcap file format (nanosecond
// timestamps, Ethernet link type), which tshark, Wireshark and tcpdump
// read. It is written by hand, and wire's encoders do not need gopacket:
// gopacket's writer imports its layers package, whose tables take about
// 22 ms to initialise in every process that links it, a lab node included.
//
// The format (https://www.tcpdump.org/manpages/pcap-savefile.5.html,
// draft-ietf-opsawg-pcap): a 24-byte file header — magic 0xA1B23C4D (the
// nanosecond variant), version 2.4, zone and accuracy 0, the snapshot
// length and the link type — then per frame a 16-byte record header
// (seconds, nanoseconds, bytes captured, bytes on the wire) and the bytes
// captured. Fields are in the writer's byte order (little-endian here), as
// the magic tells a reader.
package pcap

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// LinkTypeEthernet is LINKTYPE_ETHERNET.
const LinkTypeEthernet = 1

// magicNanos is the magic of a capture with nanosecond timestamps.
const magicNanos = 0xA1B23C4D

// Writer writes one capture.
type Writer struct {
	w       io.Writer
	snapLen int
	hdr     [16]byte
}

// NewWriter writes the file header of an Ethernet capture that keeps at
// most snapLen bytes of a frame, and returns a Writer for its frames.
func NewWriter(w io.Writer, snapLen int) (*Writer, error) {
	if snapLen <= 0 {
		return nil, fmt.Errorf("pcap: snapshot length %d: want a positive length", snapLen)
	}
	var h [24]byte
	binary.LittleEndian.PutUint32(h[0:], magicNanos)
	binary.LittleEndian.PutUint16(h[4:], 2)
	binary.LittleEndian.PutUint16(h[6:], 4)
	binary.LittleEndian.PutUint32(h[16:], uint32(snapLen))
	binary.LittleEndian.PutUint32(h[20:], LinkTypeEthernet)
	if _, err := w.Write(h[:]); err != nil {
		return nil, fmt.Errorf("pcap: file header: %w", err)
	}
	return &Writer{w: w, snapLen: snapLen}, nil
}

// WriteFrame writes one frame seen at ts: its first snapLen bytes, and
// wireLen (at least len(frame); 0 means len(frame)) as its length on the
// wire.
func (w *Writer) WriteFrame(ts time.Time, frame []byte, wireLen int) error {
	wireLen = max(wireLen, len(frame))
	frame = frame[:min(len(frame), w.snapLen)]
	ns := ts.UnixNano()
	binary.LittleEndian.PutUint32(w.hdr[0:], uint32(ns/1e9))
	binary.LittleEndian.PutUint32(w.hdr[4:], uint32(ns%1e9))
	binary.LittleEndian.PutUint32(w.hdr[8:], uint32(len(frame)))
	binary.LittleEndian.PutUint32(w.hdr[12:], uint32(wireLen))
	if _, err := w.w.Write(w.hdr[:]); err != nil {
		return fmt.Errorf("pcap: record header: %w", err)
	}
	if _, err := w.w.Write(frame); err != nil {
		return fmt.Errorf("pcap: frame: %w", err)
	}
	return nil
}
