package switchmodel

import "testing"

// TestMMUSteps walks one PG through reserve, shared, headroom and refusal
// with small numbers: shared pool 1000 B, reserve 100 B, α = 1/2,
// headroom 300 B.
func TestMMUSteps(t *testing.T) {
	type step struct {
		op        string // "admit" or "release"
		n         int64
		want      where // admit only
		used, hd  int64 // PG after the step
		sharedUse int64 // pool after the step
	}
	tests := []struct {
		name     string
		lossless bool
		steps    []step
	}{
		{"lossless", true, []step{
			{"admit", 100, inReserve, 100, 0, 0},
			// new shared use 200 ≤ ½ × (1000 − 0 − 200) = 400
			{"admit", 200, inShared, 300, 0, 200},
			// new shared use 400 > ½ × (1000 − 200 − 200) = 300: headroom
			{"admit", 200, inHeadroom, 300, 200, 200},
			// headroom 200 + 200 > 300
			{"admit", 200, refused, 300, 200, 200},
			// 200 from headroom first, then 50 from shared
			{"release", 250, 0, 250, 0, 150},
			{"release", 250, 0, 0, 0, 0},
		}},
		{"lossy", false, []step{
			{"admit", 100, inReserve, 100, 0, 0},
			{"admit", 200, inShared, 300, 0, 200},
			{"admit", 200, refused, 300, 0, 200},
			// exactly at the bound: 300 ≤ ½ × (1000 − 200 − 100) = 350
			{"admit", 100, inShared, 400, 0, 300},
			{"release", 400, 0, 0, 0, 0},
		}},
	}
	for _, tc := range tests {
		m := &mmu{size: 2000, shared: 1000, reserve: 100, alpha: 0.5}
		g := &pg{lossless: tc.lossless}
		if tc.lossless {
			g.headroom = 300
		}
		for i, s := range tc.steps {
			if s.op == "admit" {
				w := m.admit(g, s.n)
				if w != s.want {
					t.Fatalf("%s step %d: admit(%d) = %d, want %d", tc.name, i, s.n, w, s.want)
				}
				if w != refused {
					m.charge(g, s.n, w)
				}
			} else {
				m.release(g, s.n)
			}
			if g.used != s.used || g.hdrm != s.hd || m.sharedUsed != s.sharedUse {
				t.Fatalf("%s step %d: used %d hdrm %d shared %d; want %d %d %d",
					tc.name, i, g.used, g.hdrm, m.sharedUsed, s.used, s.hd, s.sharedUse)
			}
		}
		if m.used != 0 || m.hdrmUsed != 0 {
			t.Errorf("%s: buffer not empty at the end: used %d headroom %d", tc.name, m.used, m.hdrmUsed)
		}
	}
}
