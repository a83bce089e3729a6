package flowsim

// Use is a flow's use of one link: the link's index and the share of the
// flow's rate that crosses it (1, or less where a switch sprays the flow
// over several ports).
type Use struct {
	Link  int32
	Share float64
}

// MaxMin sets rates[i] to flow i's max-min fair rate over links of
// capacity caps (any unit; rates come out in it), flow i crossing the
// links of uses[i] — by progressive filling: every flow not yet frozen
// grows at the same pace; a link whose capacity is used up freezes the
// flows that cross it; a flow whose demand (demands[i] > 0; nil or 0: no
// cap) is met freezes too; until every flow is frozen. A flow crossing no
// link gets its demand (0 without one). rates must be as long as uses.
func MaxMin(caps []float64, uses [][]Use, demands, rates []float64) {
	var f filler
	f.fill(caps, uses, demands, rates)
}

// filler holds MaxMin's scratch, reused between calls.
type filler struct {
	rem    []float64 // capacity left on each link
	weight []float64 // summed shares of the unfrozen flows on each link
	users  [][]int32 // flows on each link
	used   []int32   // links some flow uses
	links  []int32   // those of them some unfrozen flow uses
	frozen []bool
}

// saturated is how close to full a link counts as full, relative to its
// capacity (float rounding of the summed increments).
const saturated = 1e-9

func (f *filler) fill(caps []float64, uses [][]Use, demands, rates []float64) {
	nl := len(caps)
	if cap(f.rem) < nl {
		f.rem = make([]float64, nl)
		f.weight = make([]float64, nl)
		f.users = make([][]int32, nl)
	}
	f.rem, f.weight, f.users = f.rem[:nl], f.weight[:nl], f.users[:nl]
	for _, l := range f.used {
		f.weight[l], f.users[l] = 0, f.users[l][:0]
	}
	f.used = f.used[:0]
	if cap(f.frozen) < len(uses) {
		f.frozen = make([]bool, len(uses))
	}
	f.frozen = f.frozen[:len(uses)]
	unfrozen := 0
	for i, us := range uses {
		rates[i] = 0
		f.frozen[i] = false
		if len(us) == 0 {
			if demands != nil {
				rates[i] = demands[i]
			}
			f.frozen[i] = true
			continue
		}
		unfrozen++
		for _, u := range us {
			if len(f.users[u.Link]) == 0 && f.weight[u.Link] == 0 {
				f.used = append(f.used, u.Link)
				f.rem[u.Link] = caps[u.Link]
			}
			f.weight[u.Link] += u.Share
			f.users[u.Link] = append(f.users[u.Link], int32(i))
		}
	}
	f.links = append(f.links[:0], f.used...)
	level := 0.0
	for unfrozen > 0 {
		// The next increment: the first link to fill, or the first
		// demand to be met.
		inc := -1.0
		for _, l := range f.links {
			if w := f.weight[l]; w > 0 {
				if x := max(f.rem[l], 0) / w; inc < 0 || x < inc {
					inc = x
				}
			}
		}
		if demands != nil {
			for i, d := range demands {
				if !f.frozen[i] && d > 0 {
					if x := d - level; inc < 0 || x < inc {
						inc = max(x, 0)
					}
				}
			}
		}
		if inc < 0 {
			break
		}
		level += inc
		for _, l := range f.links {
			f.rem[l] -= inc * f.weight[l]
		}
		// Freeze the flows of full links and met demands.
		live := f.links[:0]
		for _, l := range f.links {
			if f.weight[l] > 0 && f.rem[l] <= saturated*caps[l] {
				for _, i := range f.users[l] {
					if !f.frozen[i] {
						unfrozen -= f.freeze(uses, rates, int(i), level)
					}
				}
			}
		}
		// Links left with no unfrozen flow drop out of the scans.
		for _, l := range f.links {
			if f.weight[l] > 0 {
				live = append(live, l)
			}
		}
		f.links = live
		if demands != nil {
			for i, d := range demands {
				if !f.frozen[i] && d > 0 && level >= d*(1-saturated) {
					unfrozen -= f.freeze(uses, rates, int(i), level)
				}
			}
		}
	}
}

// freeze fixes flow i's rate at level and takes it off its links'
// weights; it returns 1.
func (f *filler) freeze(uses [][]Use, rates []float64, i int, level float64) int {
	f.frozen[i] = true
	rates[i] = level
	for _, u := range uses[i] {
		f.weight[u.Link] -= u.Share
		if f.weight[u.Link] < 1e-12 {
			f.weight[u.Link] = 0
		}
	}
	return 1
}
