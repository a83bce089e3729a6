package emu

import (
	"encoding/binary"

	"github.com/rocelab/rocelab/core/clock"
)

// A frame written on a port whose peer is a Loop too (Port.PeerLoop)
// carries a trailer after its last byte: how late, in fabric time, its
// Loop wrote it after the model sent it (the turn's write time mapped to
// fabric time, minus the event's time), then a magic. The receiving Loop
// strips it and delivers the frame a link delay after the fabric time it
// was sent — its receive stamp minus the sender's lateness — instead of
// after the stamp alone: a sender's lateness (its batch lag, at most one
// turn's) no longer lengthens the link. Lateness, not the send time
// itself, travels, so that the two Loops need not share an origin: the
// stamp is the receiver's clock, the lateness a difference on the
// sender's.
//
// The trailer is Ethernet padding beyond the IP packet's length, which
// the kernel trims and decoders show as a trailer; a frame without it (a
// kernel interface's, or one injected by a test) is delivered from its
// stamp alone. The lab's veths leave deploy.LinkOverhead bytes of room
// above the link's MTU for it.
const (
	// TrailerLen is the trailer's size: the room a model that builds its
	// own frames leaves after each (endpoint.Options.Tailroom).
	TrailerLen   = trailerLen
	trailerLen   = 16
	trailerMagic = 0x726f63656c616201 // "rocelab", 1
)

// putTrailer appends a trailer holding sent (fabric time) to f, which
// must have room for it, and returns the longer frame; stampTrailer later
// turns sent into the lateness of the write.
func putTrailer(f []byte, sent clock.Time) []byte {
	n := len(f)
	f = f[:n+trailerLen]
	binary.BigEndian.PutUint64(f[n:], uint64(sent))
	binary.BigEndian.PutUint64(f[n+8:], trailerMagic)
	return f
}

// stampTrailer replaces the send time in f's trailer by how late the
// frame is written at fabric time now: negative when the Loop ran ahead
// of the wall clock (Options.Lead) and writes it early.
func stampTrailer(f []byte, now clock.Time) {
	at := f[len(f)-trailerLen:]
	sent := clock.Time(binary.BigEndian.Uint64(at))
	binary.BigEndian.PutUint64(at, uint64(now.Sub(sent)))
}

// maxEarly bounds how early a trailer may say its frame was written: a
// Loop runs ahead by a fraction of a link delay; more is not a trailer.
const maxEarly = clock.Millisecond

// cutTrailer returns the length of f without its trailer and the
// lateness it carries, or ok false if f has none.
func cutTrailer(f []byte) (n int, late clock.Duration, ok bool) {
	n = len(f) - trailerLen
	if n < 14 || binary.BigEndian.Uint64(f[len(f)-8:]) != trailerMagic {
		return len(f), 0, false
	}
	late = clock.Duration(binary.BigEndian.Uint64(f[n:]))
	if late < -maxEarly {
		return len(f), 0, false
	}
	return n, late, true
}
