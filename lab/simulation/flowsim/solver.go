package flowsim

import (
	"cmp"
	"math"
	"slices"
)

// solver keeps the max-min fair rates of a changing set of flows (Net's),
// re-solving after each batch of changes only the part of the problem the
// changes can reach — with the result of a full progressive filling
// (MaxMin) up to float noise.
//
// Why a part suffices. Progressive filling raises every unfrozen flow at
// one level; what happens below a level λ depends only on the flows that
// froze below λ and on the links they cross. A flow that leaves at rate r
// froze at level r, so the filling below r is the same without it; a flow
// that arrives adds its shares to its links, which fill no earlier than
// the lowest level at which one of them would fill with it (levelWith).
// Below λ*, the lowest of these, the new filling is the old one: flows of
// rate below λ* keep their rates, and the filling restarts at λ* with the
// others unfrozen. Of those, only flows coupled to a change need solving:
// the search starts from the changed flows' links, takes in every flow of
// rate ≥ λ* on a link a leaving flow crossed, and goes on through links
// that can fill at all (their fixed load plus the most their other flows
// could take reaches the capacity). Anything it does not reach has the
// same residual problem as before, hence the same rates.
type solver struct {
	caps  []float64
	flows []sflow
	free  []int32
	users [][]int32   // flows on each link
	share [][]float64 // their shares there (users[l][i]'s is share[l][i])
	useAt [][]int32   // and which of their uses it is (flows[users[l][i]].uses[useAt[l][i]])

	// Since the last solve: the level the refill starts at (+Inf: none),
	// the flows added, and the links of the flows removed.
	lambda float64
	added  []int32
	seeds  []int32

	// Scratch, by link and by flow; marks hold the solve's stamp.
	stamp    uint32
	linkMark []uint32
	seedMark []uint32
	sat      []bool // link can fill: in the heap
	inComp   []uint32
	frozen   []uint32
	rem, at  []float64
	weight   []float64
	addW     []float64
	heap     linkHeap
	queue    []int32
	comp     []int32
	changed  []int32
	pairs    []rateShare
}

// sflow is one flow of the solver: a path of a QP while it sends.
type sflow struct {
	uses  []Use
	pos   []int32 // index of the flow in users[uses[k].Link]
	rate  float64
	ub    float64 // the most it could ever get: min capacity / share
	owner *QP
	path  int
	live  bool
	added bool // since the last solve
}

type rateShare struct{ rate, share float64 }

// Relative tolerances: a level is restarted a hair below λ* (safe: any
// level at or below λ* gives the same result), a link that cannot reach
// its capacity within this much is left out, and a rate that moved by
// less than float noise is kept as it was.
const (
	levelSlack = 1e-12
	fillSlack  = 1e-9
	rateNoise  = 1e-12
)

func newSolver(caps []float64) *solver {
	n := len(caps)
	s := &solver{caps: caps, users: make([][]int32, n), share: make([][]float64, n), useAt: make([][]int32, n), lambda: math.Inf(1),
		linkMark: make([]uint32, n), seedMark: make([]uint32, n), sat: make([]bool, n),
		rem: make([]float64, n), at: make([]float64, n), weight: make([]float64, n), addW: make([]float64, n)}
	s.heap.pos = make([]int32, n)
	for i := range s.heap.pos {
		s.heap.pos[i] = -1
	}
	return s
}

// add adds a flow crossing the links of uses (each link once), owned by
// path of q; its rate is set by the next solve.
func (s *solver) add(uses []Use, q *QP, path int) int32 {
	var id int32
	if n := len(s.free); n > 0 {
		id, s.free = s.free[n-1], s.free[:n-1]
	} else {
		id = int32(len(s.flows))
		s.flows = append(s.flows, sflow{})
		s.inComp = append(s.inComp, 0)
		s.frozen = append(s.frozen, 0)
	}
	f := &s.flows[id]
	*f = sflow{uses: uses, pos: f.pos[:0], owner: q, path: path, live: true, added: true, ub: math.Inf(1)}
	for k, u := range uses {
		f.pos = append(f.pos, int32(len(s.users[u.Link])))
		s.users[u.Link] = append(s.users[u.Link], id)
		s.share[u.Link] = append(s.share[u.Link], u.Share)
		s.useAt[u.Link] = append(s.useAt[u.Link], int32(k))
		if u.Share > 0 {
			f.ub = min(f.ub, s.caps[u.Link]/u.Share)
		}
	}
	if len(uses) == 0 {
		f.ub = 0
	}
	s.added = append(s.added, id)
	return id
}

// ubOf is the most a flow over uses could get: its narrowest link's
// capacity over its share there.
func (s *solver) ubOf(uses []Use) float64 {
	ub := math.Inf(1)
	for _, u := range uses {
		if u.Share > 0 {
			ub = min(ub, s.caps[u.Link]/u.Share)
		}
	}
	if math.IsInf(ub, 1) {
		return 0
	}
	return ub
}

// remove takes flow id off its links.
func (s *solver) remove(id int32) {
	f := &s.flows[id]
	if !f.added {
		s.lambda = min(s.lambda, f.rate)
		for _, u := range f.uses {
			s.seeds = append(s.seeds, u.Link)
		}
	}
	for k, u := range f.uses {
		l := u.Link
		us, sh, at := s.users[l], s.share[l], s.useAt[l]
		i, end := f.pos[k], len(us)-1
		us[i], sh[i], at[i] = us[end], sh[end], at[end]
		if i != int32(end) {
			s.flows[us[i]].pos[at[i]] = i
		}
		s.users[l], s.share[l], s.useAt[l] = us[:end], sh[:end], at[:end]
	}
	f.live = false
	f.owner = nil
	s.free = append(s.free, id)
}

// solve brings every rate up to date with the changes since the last
// solve and returns the flows whose rate changed (added flows included).
func (s *solver) solve() []int32 {
	s.changed = s.changed[:0]
	if len(s.added) == 0 && len(s.seeds) == 0 {
		return s.changed
	}
	s.stamp++
	st := s.stamp
	// The level the refill starts at.
	var addLinks []int32
	for _, id := range s.added {
		f := &s.flows[id]
		if !f.live {
			continue
		}
		for _, u := range f.uses {
			if s.linkMark[u.Link] != st {
				s.linkMark[u.Link] = st
				s.addW[u.Link] = 0
				addLinks = append(addLinks, u.Link)
			}
			s.addW[u.Link] += u.Share
		}
	}
	for _, l := range addLinks {
		s.lambda = min(s.lambda, s.levelWith(l))
	}
	lam := s.lambda * (1 - levelSlack)
	inU := func(id int32) bool { f := &s.flows[id]; return f.added || f.rate >= lam }
	// The search: seeds' U flows and the added flows first.
	s.stamp++
	st = s.stamp
	s.queue, s.comp = s.queue[:0], s.comp[:0]
	join := func(id int32) {
		if s.inComp[id] == st {
			return
		}
		s.inComp[id] = st
		s.comp = append(s.comp, id)
		for _, u := range s.flows[id].uses {
			if s.linkMark[u.Link] != st {
				s.linkMark[u.Link] = st
				s.queue = append(s.queue, u.Link)
			}
		}
	}
	for _, l := range s.seeds {
		s.seedMark[l] = st
		if s.linkMark[l] != st {
			s.linkMark[l] = st
			s.queue = append(s.queue, l)
		}
	}
	for _, id := range s.added {
		if s.flows[id].live {
			join(id)
		}
	}
	s.heap.reset()
	for qi := 0; qi < len(s.queue); qi++ {
		l := s.queue[qi]
		var fixed, wU, ubU float64
		for i, id := range s.users[l] {
			f := &s.flows[id]
			share := s.share[l][i]
			if inU(id) {
				wU += share
				ubU += share * f.ub
			} else {
				fixed += share * f.rate
			}
		}
		c := s.caps[l]
		s.sat[l] = wU > 0 && fixed+ubU >= c*(1-fillSlack)
		if s.sat[l] || s.seedMark[l] == st {
			for _, id := range s.users[l] {
				if inU(id) {
					join(id)
				}
			}
		}
		if s.sat[l] {
			s.rem[l], s.at[l], s.weight[l] = c-fixed-lam*wU, lam, wU
			s.heap.push(l, s.fullAt(l))
		}
	}
	// Progressive filling of the component from lam.
	for s.heap.len() > 0 {
		level := s.heap.minKey()
		l := s.heap.pop()
		for _, id := range s.users[l] {
			if s.inComp[id] == st && s.frozen[id] != st {
				s.freeze(id, level)
			}
		}
	}
	for _, id := range s.comp {
		f := &s.flows[id]
		if s.frozen[id] != st {
			s.frozen[id] = st // a flow with no link that can fill (none: its narrowest can)
			s.setRate(id, f.ub)
		}
	}
	for _, id := range s.added {
		s.flows[id].added = false
	}
	s.added, s.seeds, s.lambda = s.added[:0], s.seeds[:0], math.Inf(1)
	return s.changed
}

// levelWith is the lowest level at which link l fills once the shares
// added to it since the last solve (addW) rise with its flows of higher
// rate: the smallest λ with Σ share·min(rate, λ) over its other flows +
// addW·λ ≥ its capacity.
func (s *solver) levelWith(l int32) float64 {
	s.pairs = s.pairs[:0]
	w := s.addW[l]
	for i, id := range s.users[l] {
		f := &s.flows[id]
		if !f.added {
			sh := s.share[l][i]
			s.pairs = append(s.pairs, rateShare{f.rate, sh})
			w += sh
		}
	}
	slices.SortFunc(s.pairs, func(a, b rateShare) int { return cmp.Compare(a.rate, b.rate) })
	c := s.caps[l]
	var load float64 // of the flows below the level
	for _, p := range s.pairs {
		if lv := (c - load) / w; lv <= p.rate {
			return max(lv, 0)
		}
		load += p.rate * p.share
		w -= p.share
	}
	if w <= 0 {
		return math.Inf(1)
	}
	return max((c-load)/w, 0)
}

func (s *solver) fullAt(l int32) float64 {
	return s.at[l] + max(s.rem[l], 0)/s.weight[l]
}

// freeze fixes flow id's rate at level and takes it off its links that
// can fill.
func (s *solver) freeze(id int32, level float64) {
	s.frozen[id] = s.stamp
	s.setRate(id, level)
	for _, u := range s.flows[id].uses {
		l := u.Link
		if !s.sat[l] || s.linkMark[l] != s.stamp {
			continue
		}
		s.rem[l] -= (level - s.at[l]) * s.weight[l]
		s.at[l] = level
		s.weight[l] -= u.Share
		if s.weight[l] < 1e-12 {
			s.weight[l] = 0
		}
		switch {
		case s.weight[l] == 0:
			s.heap.remove(l)
		case s.heap.pos[l] >= 0:
			s.heap.update(l, s.fullAt(l))
		}
	}
}

// setRate records flow id's new rate, and the flow as changed unless it
// moved by float noise only (then it keeps its rate).
func (s *solver) setRate(id int32, r float64) {
	f := &s.flows[id]
	if !f.added && math.Abs(r-f.rate) <= rateNoise*f.rate {
		return
	}
	f.rate = r
	s.changed = append(s.changed, id)
}
