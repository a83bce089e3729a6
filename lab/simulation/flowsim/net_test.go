package flowsim

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
)

// TestTieTolerance checks the tolerance within which message ends count
// as one instant.
func TestTieTolerance(t *testing.T) {
	for _, tc := range []struct {
		at   clock.Time
		want clock.Duration
	}{
		{0, 1},
		{clock.Time(clock.Microsecond), 1},
		{clock.Time(clock.Millisecond), 1},
		{clock.Time(10 * clock.Millisecond), 10},
		{clock.Time(clock.Second), clock.Nanosecond},
	} {
		if got := TieTolerance(tc.at); got != tc.want {
			t.Errorf("TieTolerance(%v) = %v, want %v", tc.at, got, tc.want)
		}
	}
}

// TestNetTies runs QPs on links of their own at 4 Tb/s (2 ps a byte),
// whose messages' ends the Net rounds up to the picosecond from a float
// division: 1,000 B ends at 2,001 ps (float noise), 1,001 B at 2,002 and
// 1,002 B at 2,004. Ends 1 ps apart are one instant — ended together at
// the first, one rate update — ends 3 ps apart are not. Each message
// completes 150 ps after its end.
func TestNetTies(t *testing.T) {
	const oneWay, back = 100, 50
	for _, tc := range []struct {
		name       string
		bytes      []int
		want       []clock.Time // completions
		recomputes int64
	}{
		{"one QP", []int{1000}, []clock.Time{2151}, 2},
		{"same end", []int{1000, 1000}, []clock.Time{2151, 2151}, 2},
		{"1 ps apart: one instant", []int{1000, 1001}, []clock.Time{2151, 2151}, 2},
		{"3 ps apart: two", []int{1000, 1002}, []clock.Time{2151, 2154}, 3},
		{"the tie is to the first end", []int{1000, 1001, 1002}, []clock.Time{2151, 2151, 2154}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := sim.New(1)
			caps := make([]float64, len(tc.bytes))
			for i := range caps {
				caps[i] = 4e12
			}
			n := NewNet(e, caps)
			got := make([]clock.Time, len(tc.bytes))
			for i, b := range tc.bytes {
				q := n.NewQP([][]Use{{{Link: int32(i), Share: 1}}}, oneWay, back)
				q.Post(b, nil, func() { got[i] = e.Now() })
			}
			e.RunUntil(clock.Time(clock.Microsecond))
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("completions %v, want %v", got, tc.want)
					break
				}
			}
			if n.Recomputes != tc.recomputes {
				t.Errorf("%d rate updates, want %d", n.Recomputes, tc.recomputes)
			}
		})
	}
}

// TestNetRatesFollowChanges checks rates as QPs come and go on a shared
// link: two QPs share 8 Tb/s (4 each); when the short one ends the long
// one gets the whole link, so it ends earlier than at half rate.
func TestNetRatesFollowChanges(t *testing.T) {
	e := sim.New(1)
	n := NewNet(e, []float64{8e12})
	var ends [2]clock.Time
	for i, b := range []int{1000, 3000} {
		q := n.NewQP([][]Use{{{Link: 0, Share: 1}}}, 0, 0)
		q.Post(b, nil, func() { ends[i] = e.Now() })
	}
	e.RunUntil(clock.Time(clock.Microsecond))
	// The first ends at 2,000 ps (2,001: float noise) having sent its
	// 1,000 B; the second has sent as much and sends its other 2,000 B
	// at 1 B/ps.
	for i, want := range []clock.Time{2000, 4000} {
		if d := ends[i] - want; d < 0 || d > 2 {
			t.Errorf("ends %v, want [2000 4000] (+2 ps)", ends)
		}
	}
}
