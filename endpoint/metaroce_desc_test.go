package endpoint

import "testing"

func TestPSNArithmetic(t *testing.T) {
	for _, tc := range []struct {
		psn  uint32
		ref  uint64
		want uint64
	}{
		{5, seqBase | 0xFFFFF0, seqBase + 1<<24 + 5},
		{0xFFFFF0, seqBase + 1<<24 + 5, seqBase | 0xFFFFF0},
		{0x10, seqBase | 0x10, seqBase | 0x10},
	} {
		if got := unwrap(tc.psn, tc.ref); got != tc.want {
			t.Errorf("unwrap(%#x, %#x) = %#x, want %#x", tc.psn, tc.ref, got, tc.want)
		}
	}
	if d := psnDiff(2, 0xFFFFFE); d != 4 {
		t.Errorf("psnDiff across the wrap = %d, want 4", d)
	}
}
