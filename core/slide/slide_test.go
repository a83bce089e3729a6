package slide

import "testing"

// TestAppend: a queue consumed from the front by reslicing keeps
// its order and, once its array is big enough, allocates nothing; a queue
// replaced by another slice (a flush) is not moved into the old array.
func TestAppend(t *testing.T) {
	for _, depth := range []int{1, 2, 7, 256} {
		var q, buf []int
		next, want := 0, 0
		step := func() {
			Append(&q, &buf, next)
			next++
			if len(q) > depth {
				if q[0] != want {
					t.Fatalf("depth %d: head %d, want %d", depth, q[0], want)
				}
				q = q[1:]
				want++
			}
		}
		for range 10 * depth {
			step()
		}
		if allocs := testing.AllocsPerRun(1000, step); allocs != 0 {
			t.Errorf("depth %d: %.2f allocations an append in steady state", depth, allocs)
		}
		for i, v := range q {
			if v != want+i {
				t.Fatalf("depth %d: q[%d] = %d, want %d", depth, i, v, want+i)
			}
		}
	}
	var q, buf []int
	for i := range 8 {
		Append(&q, &buf, i)
	}
	old := buf
	q = []int{100} // replaced: not a slice of buf's array
	Append(&q, &buf, 101)
	if len(q) != 2 || q[0] != 100 || q[1] != 101 {
		t.Errorf("replaced queue: %v", q)
	}
	if old[0] != 0 {
		t.Errorf("the old array was written: %v", old)
	}
}
