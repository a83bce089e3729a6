package flowsim

import (
	"cmp"
	"slices"
)

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
//
// Progressive filling, event by event: every link some unfrozen flow
// crosses fills at a known level (the common rate of the unfrozen flows)
// — its capacity left at the level it was last updated, over the summed
// shares of its unfrozen flows — and the links wait in a heap by that
// level; so do the demands. The next event (the lowest) freezes its flows
// at its level, and only the links those flows cross change. A solve costs
// O((flows × path length + links) × log links), not a pass over every
// link per bottleneck level.
type filler struct {
	rem    []float64 // capacity left on each link, at level at[l]
	at     []float64 // the level rem[l] is taken at
	weight []float64 // summed shares of the unfrozen flows on each link
	users  [][]int32 // flows on each link
	used   []int32   // links some flow uses
	frozen []bool
	heap   linkHeap
	byDem  []int32 // flows with a demand, by demand
}

func (f *filler) fill(caps []float64, uses [][]Use, demands, rates []float64) {
	nl := len(caps)
	if cap(f.rem) < nl {
		f.rem = make([]float64, nl)
		f.at = make([]float64, nl)
		f.weight = make([]float64, nl)
		f.users = make([][]int32, nl)
		f.heap.pos = make([]int32, nl)
		for l := range f.heap.pos {
			f.heap.pos[l] = -1
		}
	}
	f.rem, f.at, f.weight, f.users = f.rem[:nl], f.at[:nl], f.weight[:nl], f.users[:nl]
	f.heap.pos = f.heap.pos[:nl]
	for _, l := range f.used {
		f.weight[l], f.users[l] = 0, f.users[l][:0]
	}
	f.used = f.used[:0]
	f.heap.reset()
	if cap(f.frozen) < len(uses) {
		f.frozen = make([]bool, len(uses))
	}
	f.frozen = f.frozen[:len(uses)]
	f.byDem = f.byDem[:0]
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
		if demands != nil && demands[i] > 0 {
			f.byDem = append(f.byDem, int32(i))
		}
		for _, u := range us {
			if len(f.users[u.Link]) == 0 && f.weight[u.Link] == 0 {
				f.used = append(f.used, u.Link)
				f.rem[u.Link], f.at[u.Link] = caps[u.Link], 0
			}
			f.weight[u.Link] += u.Share
			f.users[u.Link] = append(f.users[u.Link], int32(i))
		}
	}
	slices.SortFunc(f.byDem, func(a, b int32) int { return cmp.Compare(demands[a], demands[b]) })
	for _, l := range f.used {
		if f.weight[l] > 0 {
			f.heap.push(l, f.fullAt(l))
		}
	}
	d := 0 // next in byDem
	for unfrozen > 0 {
		for d < len(f.byDem) && f.frozen[f.byDem[d]] {
			d++
		}
		linkLevel, demLevel := -1.0, -1.0
		if f.heap.len() > 0 {
			linkLevel = f.heap.minKey()
		}
		if d < len(f.byDem) {
			demLevel = demands[f.byDem[d]]
		}
		switch {
		case linkLevel < 0 && demLevel < 0:
			return
		case linkLevel >= 0 && (demLevel < 0 || linkLevel <= demLevel):
			l := f.heap.pop()
			for _, i := range f.users[l] {
				if !f.frozen[i] {
					unfrozen -= f.freeze(uses, rates, int(i), linkLevel)
				}
			}
		default:
			unfrozen -= f.freeze(uses, rates, int(f.byDem[d]), demLevel)
			d++
		}
	}
}

// fullAt is the level at which link l fills.
func (f *filler) fullAt(l int32) float64 {
	return f.at[l] + max(f.rem[l], 0)/f.weight[l]
}

// freeze fixes flow i's rate at level and takes it off its links' weights,
// moving each link's fill level; it returns 1.
func (f *filler) freeze(uses [][]Use, rates []float64, i int, level float64) int {
	f.frozen[i] = true
	rates[i] = level
	for _, u := range uses[i] {
		l := u.Link
		f.rem[l] -= (level - f.at[l]) * f.weight[l]
		f.at[l] = level
		f.weight[l] -= u.Share
		if f.weight[l] < 1e-12 {
			f.weight[l] = 0
		}
		switch {
		case f.weight[l] == 0:
			f.heap.remove(l)
		case f.heap.pos[l] >= 0:
			f.heap.update(l, f.fullAt(l))
		}
	}
	return 1
}

// linkHeap is a binary min-heap of links by the level they fill at, with
// each link's position so that its key can change.
type linkHeap struct {
	links []int32
	keys  []float64
	pos   []int32 // by link: index in links, -1 when absent
}

func (h *linkHeap) len() int { return len(h.links) }

func (h *linkHeap) reset() {
	for _, l := range h.links {
		h.pos[l] = -1
	}
	h.links, h.keys = h.links[:0], h.keys[:0]
}

func (h *linkHeap) minKey() float64 { return h.keys[0] }

func (h *linkHeap) push(l int32, key float64) {
	h.links = append(h.links, l)
	h.keys = append(h.keys, key)
	h.pos[l] = int32(len(h.links) - 1)
	h.up(len(h.links) - 1)
}

func (h *linkHeap) pop() int32 {
	l := h.links[0]
	h.remove(l)
	return l
}

func (h *linkHeap) remove(l int32) {
	i := int(h.pos[l])
	if i < 0 {
		return
	}
	last := len(h.links) - 1
	h.swap(i, last)
	h.links, h.keys = h.links[:last], h.keys[:last]
	h.pos[l] = -1
	if i < last {
		h.down(i)
		h.up(i)
	}
}

func (h *linkHeap) update(l int32, key float64) {
	i := int(h.pos[l])
	h.keys[i] = key
	h.down(i)
	h.up(i)
}

func (h *linkHeap) swap(i, j int) {
	h.links[i], h.links[j] = h.links[j], h.links[i]
	h.keys[i], h.keys[j] = h.keys[j], h.keys[i]
	h.pos[h.links[i]], h.pos[h.links[j]] = int32(i), int32(j)
}

func (h *linkHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h.keys[p] <= h.keys[i] {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *linkHeap) down(i int) {
	n := len(h.links)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && h.keys[c+1] < h.keys[c] {
			c++
		}
		if h.keys[i] <= h.keys[c] {
			return
		}
		h.swap(i, c)
		i = c
	}
}
