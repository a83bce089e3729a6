package wire

import "testing"

// TestPacketPool: the pool hands back the descriptor given last first,
// keeps at most its bound, and says when it left one to the collector.
func TestPacketPool(t *testing.T) {
	tests := []struct {
		name    string
		max     int
		put     int
		kept    int
		getsNil int // Gets after the kept ones are gone, all nil
	}{
		{"empty", 4, 0, 0, 2},
		{"under the bound", 4, 3, 3, 1},
		{"at the bound", 4, 4, 4, 1},
		{"over the bound", 4, 7, 4, 1},
		{"keeps none", 0, 2, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pp := NewPacketPool(tt.max)
			ps := make([]*Packet, tt.put)
			for i := range ps {
				ps[i] = &Packet{Len: i}
				if kept := pp.Put(ps[i]); kept != (i < tt.max) {
					t.Fatalf("Put #%d kept = %v, want %v", i, kept, i < tt.max)
				}
			}
			if pp.Len() != tt.kept {
				t.Fatalf("Len = %d, want %d", pp.Len(), tt.kept)
			}
			for i := tt.kept - 1; i >= 0; i-- {
				if p := pp.Get(); p != ps[i] {
					t.Fatalf("Get = %+v, want the descriptor put #%d (last in, first out)", p, i)
				}
			}
			for range tt.getsNil {
				if p := pp.Get(); p != nil {
					t.Fatalf("Get on an empty pool = %+v, want nil", p)
				}
			}
		})
	}
}
