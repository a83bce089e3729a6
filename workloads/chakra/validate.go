package chakra

import (
	"fmt"
	"strings"
)

// validate adds to errs (the node problems convert found) every data
// dependency on a node this rank's trace does not hold and every dependency
// cycle, and returns them as an error, nil when there are none. A control
// dependency on an absent node is counted (MissingCtrl) and ignored:
// PyTorch traces converted by Chakra keep control edges to the CPU-side
// parents the converter left out, and Chakra's own feeder orders nodes by
// their data dependencies alone.
func (t *Trace) validate(errs ErrorList) error {
	nodeErr := func(n *Node, format string, a ...any) {
		errs = append(errs, &Error{File: t.File, Rank: t.Rank, Node: new(n.Ref()), Msg: fmt.Sprintf(format, a...)})
	}
	dangling := false
	for _, n := range t.Nodes {
		for _, d := range n.DataDeps {
			if _, ok := t.index[d]; !ok {
				nodeErr(n, "data dependency on node %d, which is not in this rank's trace", d)
				dangling = true
			}
		}
		for _, d := range n.CtrlDeps {
			if _, ok := t.index[d]; !ok {
				t.MissingCtrl++
			}
		}
	}
	if !dangling {
		if cyc := t.cycle(); cyc != nil {
			ids := make([]string, len(cyc)+1)
			for i, j := range cyc {
				ids[i] = fmt.Sprint(t.Nodes[j].ID)
			}
			ids[len(cyc)] = ids[0]
			nodeErr(t.Nodes[cyc[0]], "dependency cycle: %s (each depends on the next)", strings.Join(ids, " → "))
		}
	}
	return errs.err()
}

// deps calls f with the index of every node n depends on (data, then
// control), each once.
func (t *Trace) deps(n *Node, f func(int)) {
	for _, list := range [][]uint64{n.DataDeps, n.CtrlDeps} {
		for _, d := range list {
			if i, ok := t.index[d]; ok {
				f(i)
			}
		}
	}
}

// cycle returns the node indices of one dependency cycle, or nil. It runs
// Kahn's algorithm; every node it cannot order depends on another such
// node, so walking up from one of them must come back to a node it passed.
func (t *Trace) cycle() []int {
	waiting := make([]int, len(t.Nodes))
	children := make([][]int, len(t.Nodes))
	for i, n := range t.Nodes {
		t.deps(n, func(p int) {
			waiting[i]++
			children[p] = append(children[p], i)
		})
	}
	var ready []int
	for i, w := range waiting {
		if w == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		i := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		for _, c := range children[i] {
			if waiting[c]--; waiting[c] == 0 {
				ready = append(ready, c)
			}
		}
	}
	start := -1
	for i, w := range waiting {
		if w > 0 {
			start = i
			break
		}
	}
	if start < 0 {
		return nil
	}
	seen := map[int]int{} // node index → position on the path
	var path []int
	for i := start; ; {
		if at, ok := seen[i]; ok {
			return path[at:]
		}
		seen[i] = len(path)
		path = append(path, i)
		next := -1
		t.deps(t.Nodes[i], func(p int) {
			if next < 0 && waiting[p] > 0 {
				next = p
			}
		})
		i = next
	}
}
