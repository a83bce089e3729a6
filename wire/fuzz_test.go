package wire

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rocelab/rocelab/internal/testenv"
)

// addSeeds adds the samples and the real NIC's CNP to a fuzz corpus.
func addSeeds(f *testing.F) {
	samples, err := Samples()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range samples {
		f.Add(s.Frame)
	}
	f.Add(testenv.MustHex(f, cnpConnectX4))
}

// FuzzDecode: Decode never panics, its offsets stay inside the frame, and
// what it decodes as RoCE rebuilds into a frame that decodes the same.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		var p Packet
		err := p.Decode(frame)
		if err != nil {
			if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrMalformed) {
				t.Fatalf("Decode error %v wraps no sentinel", err)
			}
			return
		}
		_ = p.Summary()
		if p.Kind != KindRoCE && p.Kind != KindCNP {
			p.MarkCE()
			return
		}
		if int(p.PayloadOffset)+int(p.PayloadLen) > len(frame) {
			t.Fatalf("payload [%d:+%d] outside a %d-byte frame", p.PayloadOffset, p.PayloadLen, len(frame))
		}
		_ = p.VerifyICRC()
		payload := bytes.Clone(p.Payload())
		spec := p
		if spec.Kind == KindCNP {
			payload = nil
		}
		rebuilt, err := BuildFrame(&spec, payload)
		if errors.Is(err, ErrInvalidSpec) && strings.Contains(err.Error(), "does not fit an IP packet") && len(payload) > 0xFFFF-80 {
			// Rebuilt with the pad its payload needs, which may be more
			// than the frame carried: near 64 KiB that no longer fits.
			return
		}
		if err != nil {
			t.Fatalf("rebuilding %s: %v", p.Summary(), err)
		}
		var q Packet
		if err := q.Decode(rebuilt); err != nil {
			t.Fatalf("decoding the rebuilt frame: %v", err)
		}
		if err := q.VerifyICRC(); err != nil {
			t.Fatalf("rebuilt frame: %v", err)
		}
		// The builder normalises these: IPv4 options are dropped, the pad is
		// recomputed, a CNP gets its 16 reserved bytes, TTL 0 becomes 64.
		ignore := cmpopts.IgnoreFields(Packet{}, "Raw", "Len", "L3Offset", "L4Offset", "PayloadOffset",
			"PayloadLen", "PadCnt", "TTL", "IPID")
		if !p.HasVLAN {
			p.VLANID, p.PCP, q.VLANID, q.PCP = 0, 0, 0, 0
		}
		if p.TTL != 0 && q.TTL != p.TTL {
			t.Errorf("TTL %d rebuilt as %d", p.TTL, q.TTL)
		}
		if d := cmp.Diff(p, q, ignore, cmpopts.EquateComparable(p.SrcIP)); d != "" {
			t.Errorf("rebuild changed fields (-orig +rebuilt):\n%s", d)
		}
		if p.Kind == KindRoCE && !bytes.Equal(q.Payload(), payload) {
			t.Errorf("payload changed on rebuild")
		}
		p.MarkCE()
	})
}

// FuzzVerifyICRC: VerifyICRC and SealICRC never panic, and a sealed frame verifies.
func FuzzVerifyICRC(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		_ = VerifyICRC(frame)
		c := bytes.Clone(frame)
		if err := SealICRC(c); err != nil {
			return
		}
		if err := VerifyICRC(c); err != nil {
			t.Fatalf("sealed frame does not verify: %v", err)
		}
	})
}

// wireFrame matches a stack frame of this package's decoders (not its tests).
var wireFrame = regexp.MustCompile(`rocelab/wire\.(decode|\(\*)`)
