package endpoint

import (
	"testing"

	"github.com/rocelab/rocelab/wire"
)

// TestReleaseReusesFrames: a frame the driver released is where the NIC
// builds its next frame of at most its size, its descriptor is reused,
// and a released buffer too small for the next frame is dropped, not
// left to block the ones behind it.
func TestReleaseReusesFrames(t *testing.T) {
	n := &NIC{spares: wire.NewPacketPool(SpareDescriptors)}
	big := make([]byte, 4200, 4224)
	n.Release(&wire.Packet{Raw: big, Len: 4200})
	if n.spares.Len() != 1 {
		t.Fatalf("released descriptor not kept for reuse: %d spare", n.spares.Len())
	}
	if p := n.newPacket(); p.Raw != nil || p.Len != 0 {
		t.Fatalf("released descriptor not kept clean for reuse: %+v", p)
	}
	if n.spares.Len() != 0 {
		t.Fatalf("newPacket left %d spare, want 0", n.spares.Len())
	}
	b := n.frameBuf(4100)
	if len(b) != 0 || cap(b) != cap(big) || &b[:1][0] != &big[0] {
		t.Fatalf("frameBuf(4100) did not reuse the released buffer (cap %d)", cap(b))
	}
	if len(n.frames) != 0 {
		t.Fatalf("%d buffers kept after reuse, want 0", len(n.frames))
	}
	n.Release(&wire.Packet{Raw: big})
	n.Release(&wire.Packet{Raw: make([]byte, 100)}) // a short one on top
	if b := n.frameBuf(4100); cap(b) < 4100 || len(n.frames) != 1 {
		t.Fatalf("frameBuf(4100) over a short buffer = cap %d with %d kept; want a new one, the short one dropped", cap(b), len(n.frames))
	}
	if b := n.frameBuf(4100); &b[:1][0] != &big[0] {
		t.Fatalf("the large buffer behind the short one was not reused")
	}
	n.Release(&wire.Packet{Raw: make([]byte, 10)}) // too small to keep
	if len(n.frames) != 0 {
		t.Errorf("a buffer under the minimum frame was kept")
	}
	for range framesCap + 10 {
		n.Release(&wire.Packet{Raw: make([]byte, 100)})
	}
	if len(n.frames) != framesCap || n.spares.Len() != SpareDescriptors {
		t.Errorf("kept %d buffers and %d descriptors, want at most %d and %d", len(n.frames), n.spares.Len(), framesCap, SpareDescriptors)
	}
}
