package endpoint

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
		{"across the 24-bit wrap", []op{{seqMask - 1, false}, {seqMask, false}, {0, false}, {1, false}, {seqMask - 1, true}}, []uint32{seqMask, 0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tab seqTable[int]
			live := map[uint32]*int{}
			for _, o := range tc.ops {
				if o.del {
					tab.del(o.num)
					delete(live, o.num)
					continue
				}
				v := new(int)
				*v = int(o.num)
				tab.put(o.num, v)
				live[o.num] = v
			}
			var got []uint32
			tab.each(func(num uint32, v *int) {
				if uint32(*v) != num {
					t.Errorf("each: %d holds %d", num, *v)
				}
				got = append(got, num)
			})
			if !slices.Equal(got, tc.want) {
				t.Errorf("held %v, want %v", got, tc.want)
			}
			if tab.len() != len(tc.want) {
				t.Errorf("len %d, want %d", tab.len(), len(tc.want))
			}
			for num, v := range live {
				if tab.get(num) != v {
					t.Errorf("get(%d) = %p, want %p", num, tab.get(num), v)
				}
			}
			for _, absent := range []uint32{3, 4, 1000, seqMask - 5} {
				if live[absent] == nil && tab.get(absent) != nil {
					t.Errorf("get(%d) found %d", absent, *tab.get(absent))
				}
			}
		})
	}
}
