package emu_test

import (
	"encoding/binary"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/wire"
)

// The trailer as trailer.go lays it out: lateness (ps), then the magic.
const (
	trailerLen   = 16
	trailerMagic = 0x726f63656c616201
)

// withTrailer returns f followed by a trailer saying its sender wrote it
// late (fabric time) after its model sent it.
func withTrailer(f []byte, late clock.Duration) []byte {
	out := append([]byte(nil), f...)
	out = binary.BigEndian.AppendUint64(out, uint64(late))
	return binary.BigEndian.AppendUint64(out, trailerMagic)
}

// trailerOf splits a written frame into the frame and the lateness its
// trailer says, failing if it has none.
func trailerOf(t *testing.T, f []byte) ([]byte, clock.Duration) {
	t.Helper()
	n := len(f) - trailerLen
	if n < 14 || binary.BigEndian.Uint64(f[len(f)-8:]) != trailerMagic {
		t.Fatalf("written frame of %d bytes has no trailer", len(f))
	}
	return f[:n], clock.Duration(binary.BigEndian.Uint64(f[n:]))
}

// fabricOf is the fabric time of wall time w on a loop started at start,
// rounded down as the loop does.
func fabricOf(start, w time.Time) clock.Time {
	return clock.Time(w.Sub(start).Nanoseconds() * int64(clock.Nanosecond) / scale)
}

// near fails unless got is within 2 ns of want (a picosecond of fabric
// time rounds to a nanosecond of wall at this scale).
func near(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if d := got.Sub(want); d < -2*time.Nanosecond || d > 2*time.Nanosecond {
		t.Errorf("%s at %v, want %v (%v off)", what, got, want, d)
	}
}

// TestTrailer: on ports whose peer is a Loop, a frame is delivered a
// link delay after it was sent — its receive stamp less the lateness its
// trailer reports — not after its stamp; a frame without a trailer is
// delivered from its stamp; what the loop writes carries a trailer with
// how late it wrote it, while the model's own view (taps, byte counters)
// does not see it; and a frame whose trailer would put it before the
// frame read ahead of it on the same port does not overtake it.
func TestTrailer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRigPeers(t, switchmodel.DefaultConfig(), true, 100*clock.Gbps, 100*clock.Gbps)
		stop := r.run(t)
		defer stop()
		start := time.Now()
		time.Sleep(time.Millisecond)
		plain := frame(t, 0, 1, 26, 1024, 1)
		ser := (100 * clock.Gbps).Serialize(wire.OnWireBytes(len(plain)))
		wall := func(d clock.Duration) time.Duration { return time.Duration(int64(d) * scale / int64(clock.Nanosecond)) }

		// Sent 0.3 µs of fabric time before it was stamped.
		const late = 300 * clock.Nanosecond
		stamp := time.Now()
		r.ports[0].InjectAt(stamp, withTrailer(plain, late))
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		got := r.ports[1].Written()
		if len(got) != 1 {
			t.Fatalf("port 1 wrote %d frames, want 1", len(got))
		}
		near(t, "a frame sent 0.3 µs before its stamp: written", got[0].At, wallAfter(start, stamp.Add(-wall(late)), hop+ser))
		f, wrote := trailerOf(t, got[0].Frame)
		if len(f) != len(plain) {
			t.Errorf("written frame is %d bytes without its trailer, want %d", len(f), len(plain))
		}
		if wrote > clock.Picosecond {
			t.Errorf("an on-time loop wrote a frame %v late, want 0", wrote)
		}

		// No trailer: from the stamp, as on a kernel interface's port.
		stamp = time.Now()
		r.ports[0].InjectAt(stamp, frame(t, 0, 1, 26, 1024, 2))
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		got = r.ports[1].Written()
		if len(got) != 1 {
			t.Fatalf("port 1 wrote %d frames, want 1", len(got))
		}
		near(t, "a frame without a trailer: written", got[0].At, wallAfter(start, stamp, hop+ser))

		// The loop is held 5 ms of wall (5 ns of fabric) past the time
		// the switch sends the frame: its trailer says so.
		stamp = time.Now()
		r.ports[0].InjectAt(stamp, withTrailer(frame(t, 0, 1, 26, 1024, 3), 0))
		time.Sleep(time.Millisecond / 2)
		r.loop.Post(func() { time.Sleep(wall(hop+ser) + 5*time.Millisecond) })
		time.Sleep(20 * time.Millisecond)
		synctest.Wait()
		got = r.ports[1].Written()
		if len(got) != 1 {
			t.Fatalf("port 1 wrote %d frames, want 1", len(got))
		}
		sent := fabricOf(start, stamp).Add(hop + ser)
		_, wrote = trailerOf(t, got[0].Frame)
		if want := fabricOf(start, got[0].At).Sub(sent); wrote < want-clock.Picosecond || wrote > want+clock.Picosecond || want < 4*clock.Nanosecond {
			t.Errorf("a loop held past the send: trailer says %v late, want %v", wrote, want)
		}

		// A frame whose trailer puts its sending before that of the
		// frame read ahead of it is delivered after that frame.
		stamp = time.Now()
		r.ports[0].InjectAt(stamp, withTrailer(frame(t, 0, 1, 26, 1024, 4), 0))
		time.Sleep(100 * time.Microsecond)
		r.ports[0].InjectAt(time.Now(), withTrailer(frame(t, 0, 1, 26, 1024, 5), 500*clock.Nanosecond))
		time.Sleep(20 * time.Millisecond)
		synctest.Wait()
		got = r.ports[1].Written()
		var psns []uint32
		for _, w := range got {
			f, _ := trailerOf(t, w.Frame)
			var p wire.Packet
			if err := p.Decode(f); err != nil {
				t.Fatal(err)
			}
			psns = append(psns, p.PSN)
		}
		if len(psns) != 2 || psns[0] != 4 || psns[1] != 5 {
			t.Errorf("written PSNs %v, want [4 5]: a link does not reorder", psns)
		}

		_, s, err := r.loop.Gather(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		p0 := telemetry.Label{Name: "port", Value: "0"}
		if got, want := telemetry.Sum(s, "emu_rx_sender_late_seconds_total", p0), (late + 500*clock.Nanosecond).Seconds(); got < want*0.999 || got > want*1.001 {
			t.Errorf("emu_rx_sender_late_seconds_total = %v, want %v", got, want)
		}
		if got, want := telemetry.Sum(s, "emu_rx_bytes_total", p0), float64(5*len(plain)); got != want {
			t.Errorf("emu_rx_bytes_total = %v, want %v (trailers not counted)", got, want)
		}
		if got, want := telemetry.Sum(s, "emu_tx_bytes_total", telemetry.Label{Name: "port", Value: "1"}), float64(5*len(plain)); got != want {
			t.Errorf("emu_tx_bytes_total = %v, want %v (trailers not counted)", got, want)
		}
	})
}
