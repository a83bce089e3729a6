package compliance

import (
	"fmt"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/wire"
)

// T is a case's handle on its Env: the wire, the adapter, the verdict and
// the exchange it recorded.
type T struct {
	env     Env
	c       *Case
	start   clock.Time
	failed  bool
	detail  string // the first failure's message (Result.Detail)
	msgs    []string
	frames  []Frame
	pending []Frame // received, not yet consumed by Recv
}

// fatal aborts a case; Run recovers it.
type fatal struct{}

// Errorf records a failure and goes on.
func (t *T) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !t.failed {
		t.failed, t.detail = true, msg
	}
	t.msgs = append(t.msgs, fmt.Sprintf("%v: FAIL: ", t.Since())+msg)
}

// Fatalf records a failure and ends the case.
func (t *T) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	panic(fatal{})
}

// Logf notes what the case saw.
func (t *T) Logf(format string, args ...any) {
	t.msgs = append(t.msgs, fmt.Sprintf("%v: ", t.Since())+fmt.Sprintf(format, args...))
}

// must ends the case with err when it is not nil.
func (t *T) must(err error, what string) {
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Now is the Env's clock.
func (t *T) Now() clock.Time { return t.env.Now() }

// Jitter is the Env's timing tolerance (Env.Jitter).
func (t *T) Jitter() clock.Duration { return t.env.Jitter() }

// Since is the time since the case started.
func (t *T) Since() clock.Duration { return t.env.Now().Sub(t.start) }

// SendFrame sends raw bytes to the IUT and records them.
func (t *T) SendFrame(b []byte) {
	t.frames = append(t.frames, Frame{At: t.Now(), Data: append([]byte(nil), b...), FromT: true})
	t.must(t.env.Send(b), "send")
}

// Send builds the frame p describes (with payload) and sends it.
func (t *T) Send(p *wire.Packet, payload []byte) {
	b, err := wire.BuildFrame(p, payload)
	t.must(err, "build frame")
	t.SendFrame(b)
}

// In is a frame from the IUT, decoded.
type In struct {
	At clock.Time
	P  wire.Packet
}

// Recv returns the next frame from the IUT within d, or nil. Frames that
// do not decode are recorded and skipped.
func (t *T) Recv(d clock.Duration) *In {
	deadline := t.Now().Add(d)
	for {
		var f Frame
		if len(t.pending) > 0 {
			f, t.pending = t.pending[0], t.pending[1:]
		} else {
			var ok bool
			var err error
			f, ok, err = t.env.Next(deadline)
			t.must(err, "receive")
			if !ok {
				return nil
			}
			t.frames = append(t.frames, f)
		}
		in := &In{At: f.At}
		if err := in.P.Decode(f.Data); err != nil {
			t.Logf("undecodable frame from the IUT: %v", err)
			continue
		}
		return in
	}
}

// Collect returns every frame from the IUT within d.
func (t *T) Collect(d clock.Duration) []*In {
	end := t.Now().Add(d)
	var out []*In
	for {
		in := t.recvUntil(end)
		if in == nil {
			return out
		}
		out = append(out, in)
	}
}

// recvUntil waits until end for the next frame from the IUT (nil: none).
func (t *T) recvUntil(end clock.Time) *In {
	return t.Recv(max(end.Sub(t.Now()), 0))
}

// Settle collects every frame from the IUT within d plus the Env's
// jitter: for answers a case expects within d (not for checks that
// nothing comes).
func (t *T) Settle(d clock.Duration) []*In { return t.Collect(d + t.Jitter()) }

// Expect waits up to d for a frame from the IUT that match accepts and
// returns it; frames before it are returned in skipped. It fails the case
// when none comes (within d plus the Env's jitter).
func (t *T) Expect(d clock.Duration, what string, match func(*In) bool) (got *In, skipped []*In) {
	end := t.Now().Add(d + t.Jitter())
	for {
		in := t.recvUntil(end)
		if in == nil {
			t.Fatalf("no %s within %v (saw %d other frames)", what, d, len(skipped))
		}
		if match(in) {
			return in, skipped
		}
		skipped = append(skipped, in)
	}
}

// PFC sends an 802.1Qbb frame pausing the priorities in enable for quanta.
func (t *T) PFC(enable uint8, quanta uint16) {
	_, mac := t.env.Peer()
	p := &wire.Packet{Kind: wire.KindPFC, SrcMAC: mac, ClassEnable: enable}
	for i := range 8 {
		if enable&(1<<i) != 0 {
			p.Quanta[i] = quanta
		}
	}
	t.Send(p, nil)
}
