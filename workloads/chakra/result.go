package chakra

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/rocelab/rocelab/core/clock"
)

// Span is one node's life on the timeline, in time since the replay's
// start: issued once its dependencies completed; started when the compute
// stream took it up or, for communication, when every participant had
// issued its part and the Comm got it; ended when it completed.
type Span struct {
	Node NodeRef `json:"node"`
	Kind Kind    `json:"kind"`
	// Op is a collective's type (ALL_REDUCE, …), empty for other kinds.
	Op     string     `json:"op,omitempty"`
	Issued clock.Time `json:"issued_ps"`
	Start  clock.Time `json:"start_ps"`
	End    clock.Time `json:"end_ps"`
}

// RankResult is one rank's replay.
type RankResult struct {
	Rank int `json:"rank"`
	// Iteration is when the rank's last node completed.
	Iteration clock.Duration `json:"iteration_ps"`
	// Compute is the time its compute stream was busy.
	Compute clock.Duration `json:"compute_ps"`
	// Comm is the time at least one of its communication nodes was in
	// flight, from issue (waiting for late peers counts) to completion.
	Comm clock.Duration `json:"comm_ps"`
	// Exposed is the part of Comm during which the compute stream was idle.
	Exposed  clock.Duration `json:"exposed_comm_ps"`
	Timeline []Span         `json:"timeline"` // by start, then issue, then node id
}

// Result is a finished replay.
type Result struct {
	Ranks []RankResult `json:"ranks"`
	// Iteration is the slowest rank's.
	Iteration clock.Duration `json:"iteration_ps"`
}

// Result returns the replay's outcome once the scheduler ran out of
// callbacks. It fails when a rank did not finish (naming the nodes each
// unfinished rank waits on: a collective a member never issued, a send
// without its receive) or when matched collectives disagreed on their type.
func (r *Replay) Result() (*Result, error) {
	errs := slices.Clone(r.errs)
	res := &Result{}
	for rank, rr := range r.ranks {
		if rr.left > 0 {
			errs = append(errs, rr.stuck(rank))
			continue
		}
		rk := RankResult{Rank: rank}
		var comm, comp []interval
		for _, s := range rr.spans {
			s.Issued, s.Start, s.End = s.Issued-r.t0, s.Start-r.t0, s.End-r.t0
			rk.Timeline = append(rk.Timeline, s)
			rk.Iteration = max(rk.Iteration, clock.Duration(s.End))
			switch {
			case s.Kind == Compute:
				comp = append(comp, interval{s.Start, s.End})
				rk.Compute += s.End.Sub(s.Start)
			case s.Kind.Comm():
				comm = append(comm, interval{s.Issued, s.End})
			}
		}
		slices.SortStableFunc(rk.Timeline, func(a, b Span) int {
			return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Issued, b.Issued), cmp.Compare(a.Node.ID, b.Node.ID))
		})
		comm, comp = union(comm), union(comp)
		rk.Comm = length(comm)
		rk.Exposed = rk.Comm - overlap(comm, comp)
		res.Iteration = max(res.Iteration, rk.Iteration)
		res.Ranks = append(res.Ranks, rk)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return res, nil
}

// stuck describes why rank did not finish.
func (rr *rankRun) stuck(rank int) error {
	var waits []string
	for i, n := range rr.tr.Nodes {
		if rr.waiting[i] == 0 && n.Kind.Comm() { // issued, not completed
			switch n.Kind {
			case Coll:
				waits = append(waits, fmt.Sprintf("%s (%s in group %q)", n.Ref(), n.CollType, n.Group))
			default:
				waits = append(waits, fmt.Sprintf("%s (%s, peer %d, tag %d)", n.Ref(), n.Kind, n.Peer, n.Tag))
			}
		}
	}
	return fmt.Errorf("chakra: %s: rank %d did not finish: %d nodes left; waiting on %v", rr.tr.File, rank, rr.left, waits)
}

type interval struct{ lo, hi clock.Time }

// union merges intervals into disjoint ones, ascending.
func union(in []interval) []interval {
	slices.SortFunc(in, func(a, b interval) int { return cmp.Compare(a.lo, b.lo) })
	var out []interval
	for _, v := range in {
		if v.hi <= v.lo {
			continue
		}
		if k := len(out) - 1; k >= 0 && v.lo <= out[k].hi {
			out[k].hi = max(out[k].hi, v.hi)
			continue
		}
		out = append(out, v)
	}
	return out
}

func length(in []interval) clock.Duration {
	var d clock.Duration
	for _, v := range in {
		d += v.hi.Sub(v.lo)
	}
	return d
}

// overlap returns the time two disjoint ascending interval lists share.
func overlap(a, b []interval) clock.Duration {
	var d clock.Duration
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo, hi := max(a[i].lo, b[j].lo), min(a[i].hi, b[j].hi)
		if hi > lo {
			d += hi.Sub(lo)
		}
		if a[i].hi < b[j].hi {
			i++
		} else {
			j++
		}
	}
	return d
}
