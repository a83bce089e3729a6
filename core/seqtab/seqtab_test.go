package seqtab

import (
	"slices"
	"testing"
)

func TestSeqTable(t *testing.T) {
	type op struct {
		num uint32
		del bool // remove num (else store it)
	}
	tests := []struct {
		name string
		ops  []op
		want []uint32 // the numbers held, oldest first
	}{
		{"empty", nil, nil},
		{"in order", []op{{5, false}, {6, false}, {7, false}}, []uint32{5, 6, 7}},
		{"oldest removed trims", []op{{5, false}, {6, false}, {7, false}, {5, true}}, []uint32{6, 7}},
		{"middle removed leaves a hole", []op{{5, false}, {6, false}, {7, false}, {6, true}}, []uint32{5, 7}},
		{"holes trimmed with the front", []op{{5, false}, {6, false}, {7, false}, {6, true}, {5, true}, {8, false}}, []uint32{7, 8}},
		{"emptied then refilled elsewhere", []op{{5, false}, {5, true}, {900, false}}, []uint32{900}},
		{"unknown removed", []op{{5, false}, {4, true}, {6, true}, {5000, true}}, []uint32{5}},
		{"across the 24-bit wrap", []op{{Mask - 1, false}, {Mask, false}, {0, false}, {1, false}, {Mask - 1, true}}, []uint32{Mask, 0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tab Table[*int]
			live := map[uint32]*int{}
			for _, o := range tc.ops {
				if o.del {
					tab.Delete(o.num)
					delete(live, o.num)
					continue
				}
				v := new(int)
				*v = int(o.num)
				tab.Put(o.num, v)
				live[o.num] = v
			}
			var got []uint32
			tab.Each(func(num uint32, v *int) {
				if uint32(*v) != num {
					t.Errorf("each: %d holds %d", num, *v)
				}
				got = append(got, num)
			})
			if !slices.Equal(got, tc.want) {
				t.Errorf("held %v, want %v", got, tc.want)
			}
			if tab.Len() != len(tc.want) {
				t.Errorf("len %d, want %d", tab.Len(), len(tc.want))
			}
			for num, v := range live {
				if got, ok := tab.Get(num); !ok || got != v {
					t.Errorf("Get(%d) = %p, %v, want %p", num, got, ok, v)
				}
			}
			for _, absent := range []uint32{3, 4, 1000, Mask - 5} {
				if _, ok := tab.Get(absent); live[absent] == nil && ok {
					t.Errorf("Get(%d) found a value", absent)
				}
			}
		})
	}
}

// TestPutOutOfSequence: a number older than those held (or far ahead)
// panics instead of growing the table to 2^24 slots.
func TestPutOutOfSequence(t *testing.T) {
	for _, tc := range []struct {
		name string
		num  uint32
	}{{"older", 4}, {"far ahead", 10 + MaxGap + 2}} {
		t.Run(tc.name, func(t *testing.T) {
			var tab Table[int]
			tab.Put(5, 5)
			tab.Put(6, 6)
			defer func() {
				if recover() == nil {
					t.Errorf("Put(%d) did not panic", tc.num)
				}
				if len(tab.slots) != 2 {
					t.Errorf("the table grew to %d slots", len(tab.slots))
				}
			}()
			tab.Put(tc.num, 0)
		})
	}
}

// TestSlidingWindowReusesItsArray: numbers handed out and retired in
// order, a window of them live at a time (a channel's writes in flight),
// keep their values and, once the array is big enough, allocate nothing:
// the live span moves back to the array's start instead of growing a new
// array each time it reaches the end.
func TestSlidingWindowReusesItsArray(t *testing.T) {
	for _, window := range []int{1, 3, 64, 1000} {
		var tab Table[int]
		next, old := uint32(Mask-5), uint32(Mask-5) // across the wrap too
		step := func() {
			tab.Put(next&Mask, int(next&Mask))
			next++
			if int(next-old) > window {
				if v, ok := tab.Get(old & Mask); !ok || v != int(old&Mask) {
					t.Fatalf("window %d: Get(%d) = %d, %v", window, old&Mask, v, ok)
				}
				tab.Delete(old & Mask)
				old++
			}
		}
		for range 10 * window {
			step()
		}
		if allocs := testing.AllocsPerRun(1000, step); allocs != 0 {
			t.Errorf("window %d: %.2f allocations a step in steady state", window, allocs)
		}
		if tab.Len() != window {
			t.Errorf("window %d: %d live", window, tab.Len())
		}
		for n := old; n != next; n++ {
			if v, ok := tab.Get(n & Mask); !ok || v != int(n&Mask) {
				t.Fatalf("window %d: Get(%d) = %d, %v at the end", window, n&Mask, v, ok)
			}
		}
	}
}
