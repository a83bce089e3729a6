package collective

import (
	"math/rand/v2"
	"testing"
)

// TestArrivals: add reports a duplicate exactly when the index came
// before, whether it was below the low-water mark, in the window or far
// ahead of it, including indices that were far when they came and are in
// the window or below the mark by the time they come again.
func TestArrivals(t *testing.T) {
	tests := []struct {
		name string
		n    int
		adds []int
		dups []int // positions in adds that must be duplicates
	}{
		{"in order", 5, []int{0, 1, 2, 3, 4}, nil},
		{"again below the mark", 5, []int{0, 1, 2, 1}, []int{3}},
		{"again in the window", 10, []int{0, 3, 5, 3}, []int{3}},
		{"again far ahead", 200, []int{0, 150, 150}, []int{2}},
		{"far one pulled into the window", 200, append([]int{120}, seq(0, 121)...), []int{121}},
		{"far one below the mark", 200, append(append([]int{70}, seq(0, 100)...), 70), []int{71, 101}},
		{"last index", 130, []int{129, 128, 129}, []int{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newArrivals(tt.n)
			want := map[int]bool{}
			for _, p := range tt.dups {
				want[p] = true
			}
			for p, i := range tt.adds {
				if got := a.add(i); got != want[p] {
					t.Errorf("add #%d (index %d) = %v, want %v", p, i, got, want[p])
				}
			}
		})
	}
}

// seq returns from … to-1.
func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// TestArrivalsMatchesSet: random orders, nearly sorted or shuffled, with
// repeats, against a plain set; and after reset, again from nothing.
func TestArrivalsMatchesSet(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 1 + rng.IntN(600)
		order := rng.Perm(n)
		if seed%2 == 0 { // a ring: in order, with a few swapped far apart
			for i := range order {
				order[i] = i
			}
			for range 1 + n/50 {
				i, j := rng.IntN(n), rng.IntN(n)
				order[i], order[j] = order[j], order[i]
			}
		}
		for range n / 4 { // repeats, anywhere
			order = append(order, rng.IntN(n))
		}
		a := newArrivals(n)
		for round := range 2 {
			set := map[int]bool{}
			for p, i := range order {
				if got, want := a.add(i), set[i]; got != want {
					t.Fatalf("seed %d round %d: add #%d (index %d of %d) = %v, want %v", seed, round, p, i, n, got, want)
				}
				set[i] = true
			}
			if a.low != n || a.win != 0 || a.far != 0 {
				t.Fatalf("seed %d round %d: all %d arrived, but low %d, window %#x, %d far", seed, round, n, a.low, a.win, a.far)
			}
			a.reset()
		}
	}
}
