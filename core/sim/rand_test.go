package sim

import (
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

func draw(e *Engine, name string) []uint64 {
	r := e.Rand(name)
	out := make([]uint64, 8)
	for i := range out {
		out[i] = r.Uint64()
	}
	return out
}

func TestRandStreams(t *testing.T) {
	// Same seed and name: same sequence, whatever else was created first.
	a := New(42)
	wantX := draw(a, "x")
	wantY := draw(a, "y")

	b := New(42)
	gotY := draw(b, "y")
	b.Rand("z").Uint64()
	gotX := draw(b, "x")
	if d := gocmp.Diff(wantX, gotX); d != "" {
		t.Errorf("stream x depends on creation order (-want +got):\n%s", d)
	}
	if d := gocmp.Diff(wantY, gotY); d != "" {
		t.Errorf("stream y depends on creation order (-want +got):\n%s", d)
	}

	tests := []struct {
		name     string
		seed     uint64
		stream   string
		wantSame bool
	}{
		{"different name", 42, "y", false},
		{"different seed", 43, "x", false},
		{"adjacent seed", 41, "x", false},
		{"same", 42, "x", true},
	}
	for _, tc := range tests {
		got := draw(New(tc.seed), tc.stream)
		if same := gocmp.Equal(wantX, got); same != tc.wantSame {
			t.Errorf("%s: same=%v, want %v", tc.name, same, tc.wantSame)
		}
	}
	if a.Rand("x") != a.Rand("x") {
		t.Error("Rand with one name returned two generators")
	}
	if a.Seed() != 42 {
		t.Errorf("Seed=%d", a.Seed())
	}
}
