package scenario

import (
	"fmt"
	"math/rand/v2"

	"go.yaml.in/yaml/v3"

	"github.com/rocelab/rocelab/topologies"
)

// Perf traffic patterns: how from and to pair into flows.
const (
	// PatternPairs pairs from and to many to one, one to many or one to
	// one in order (the default).
	PatternPairs = "pairs"
	// PatternPermutation draws a random permutation: every sender sends to
	// exactly one receiver and every receiver hears from exactly one
	// sender, never itself; seeded by the run's seed.
	PatternPermutation = "permutation"
	// PatternAllToAll makes one flow from every sender to every receiver
	// but itself: n·(n-1) flows over n endpoints (at most MaxAllToAllQPs
	// QPs in all).
	PatternAllToAll = "all-to-all"
)

var perfPatterns = []string{PatternPairs, PatternPermutation, PatternAllToAll}

// MaxAllToAllQPs bounds the connected QP pairs of an all-to-all: flows ×
// qps of a perf workload, n·(n-1)/2 of an n-rank collective. A QP costs
// the simulator ~200 KB, so memory grows with n²: 32,640 pairs (256
// ranks) take ~13 GB.
const MaxAllToAllQPs = 256 * 255 / 2

// permStream is the PCG stream of permutations: the run's seed alone
// decides, so two permutation workloads over the same endpoints draw the
// same permutation (a fair comparison of two settings).
const permStream = 0x70e4a5c3d2b1f001

// Permutation returns the flows of w for a run seeded with seed: a
// permutation workload's pairing drawn for that seed, else w.Flows.
func (w *Workload) Permutation(seed uint64) []Flow {
	if w.Kind != KindPerf || w.Pattern != PatternPermutation {
		return w.Flows
	}
	flows, _ := permute(w.From, w.To, seed)
	return flows
}

// permute pairs from with a random ordering of to such that no endpoint
// sends to itself: uniform (rejection of shuffles with a self pair) for
// the first 64 draws, then repaired by swaps. from and to have the same
// length and no repeats.
func permute(from, to []*topologies.Port, seed uint64) ([]Flow, error) {
	n := len(from)
	if n != len(to) {
		return nil, fmt.Errorf("%d senders and %d receivers; a permutation needs as many of each", n, len(to))
	}
	if n < 2 {
		return nil, fmt.Errorf("a permutation needs at least 2 endpoints, got %d", n)
	}
	rng := rand.New(rand.NewPCG(seed, permStream))
	perm := make([]int, n)
	selfPair := func() int {
		for i, j := range perm {
			if from[i] == to[j] {
				return i
			}
		}
		return -1
	}
	for try := 0; ; try++ {
		for i := range perm {
			perm[i] = i
		}
		rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		if selfPair() < 0 || try == 63 {
			break
		}
	}
	for i := selfPair(); i >= 0; i = selfPair() {
		k := rng.IntN(n)
		fixed := false
		for d := range n {
			j := (k + d) % n
			if j != i && from[j] != to[perm[i]] && from[i] != to[perm[j]] {
				perm[i], perm[j] = perm[j], perm[i]
				fixed = true
				break
			}
		}
		if !fixed {
			return nil, fmt.Errorf("no permutation of %d endpoints avoids sending to itself", n)
		}
	}
	out := make([]Flow, n)
	for i, j := range perm {
		out[i] = Flow{From: from[i], To: to[j]}
	}
	return out, nil
}

// patternFlows resolves the endpoints of a permutation or all-to-all perf
// workload: from and to, either of them alone (the same set receives), or
// neither (every host's back-end ports).
func (r *resolver) patternFlows(w *Workload, n *yaml.Node, vals map[string]*yaml.Node) {
	e := r.e
	fv, tv := vals["from"], vals["to"]
	switch {
	case fv == nil && tv == nil:
		w.From, _ = r.lookupEndpointNode("all", topologies.BE)
		w.To = w.From
	case fv == nil:
		w.To = r.endpoints(tv, "to", topologies.BE)
		w.From = w.To
	case tv == nil:
		w.From = r.endpoints(fv, "from", topologies.BE)
		w.To = w.From
	default:
		w.From = r.endpoints(fv, "from", topologies.BE)
		w.To = r.endpoints(tv, "to", topologies.BE)
	}
	at := posOf(n)
	if tv != nil {
		at = posOf(tv)
	} else if fv != nil {
		at = posOf(fv)
	}
	if len(w.From) == 0 || len(w.To) == 0 {
		return
	}
	switch w.Pattern {
	case PatternPermutation:
		flows, err := permute(w.From, w.To, r.s.Seed)
		if err != nil {
			e.add(at, "workload %s: %v", w.Name, err)
			return
		}
		w.Flows = flows
	case PatternAllToAll:
		for _, f := range w.From {
			for _, t := range w.To {
				if f != t {
					w.Flows = append(w.Flows, Flow{From: f, To: t})
				}
			}
		}
		switch {
		case len(w.Flows) == 0:
			e.add(at, "workload %s: all-to-all over one endpoint has no flows", w.Name)
		case len(w.Flows)*w.QPs > MaxAllToAllQPs:
			e.add(at, "workload %s: all-to-all makes %d flows of %d QPs (n·(n-1) flows); at most %d QP pairs fit the simulator (~200 KB each)", w.Name, len(w.Flows), w.QPs, MaxAllToAllQPs)
			w.Flows = nil
		}
	}
}
