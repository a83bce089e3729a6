package node

import "testing"

func TestCountDiff(t *testing.T) {
	base := make([]byte, 10000)
	fillPattern(base, 7, 1)
	flip := func(at ...int) []byte {
		b := append([]byte(nil), base...)
		for _, i := range at {
			b[i] ^= 0xff
		}
		return b
	}
	for _, c := range []struct {
		name string
		got  []byte
		want int64
	}{
		{"equal", flip(), 0},
		{"first byte", flip(0), 1},
		{"last byte", flip(9999), 1},
		{"chunk edges", flip(4095, 4096, 8191, 8192), 4},
		{"one chunk, many", flip(10, 11, 12, 13), 4},
		{"empty", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := base[:len(c.got)]
			if got := countDiff(c.got, want); got != c.want {
				t.Errorf("countDiff = %d, want %d", got, c.want)
			}
		})
	}
}
