package scenario

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/topologies"
)

// fakePorts returns n ports of distinct hosts.
func fakePorts(n int) []*topologies.Port {
	out := make([]*topologies.Port, n)
	for i := range out {
		out[i] = &topologies.Port{Node: &topologies.Node{Name: fmt.Sprintf("h%d", i)}, Name: "gpu0"}
	}
	return out
}

// names returns the flows as from->to strings.
func names(flows []Flow) []string {
	out := make([]string, len(flows))
	for i, f := range flows {
		out[i] = f.String()
	}
	return out
}

// checkPermutation fails unless flows pair every sender of from with
// exactly one receiver of to, each receiver used once, none itself.
func checkPermutation(t *testing.T, from, to []*topologies.Port, flows []Flow) {
	t.Helper()
	if len(flows) != len(from) {
		t.Fatalf("%d flows for %d senders", len(flows), len(from))
	}
	seen := map[*topologies.Port]bool{}
	for i, f := range flows {
		if f.From != from[i] {
			t.Fatalf("flow %d from %s, want %s", i, PortName(f.From), PortName(from[i]))
		}
		if f.From == f.To {
			t.Fatalf("flow %d: %s sends to itself", i, PortName(f.From))
		}
		if seen[f.To] {
			t.Fatalf("%s receives twice", PortName(f.To))
		}
		seen[f.To] = true
	}
	for _, p := range to {
		if !seen[p] {
			t.Fatalf("%s receives nothing", PortName(p))
		}
	}
}

func TestPermute(t *testing.T) {
	all := fakePorts(40)
	for _, tc := range []struct {
		name     string
		from, to []*topologies.Port
	}{
		{"two", all[:2], all[:2]},
		{"three", all[:3], all[:3]},
		{"same-set", all[:33], all[:33]},
		{"same-set-reordered", all[:20], append(append([]*topologies.Port{}, all[10:20]...), all[:10]...)},
		{"disjoint", all[:20], all[20:]},
		{"overlap", all[:20], all[10:30]},
		{"big", fakePorts(1024), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			to := tc.to
			if to == nil {
				to = tc.from
			}
			var first []Flow
			for seed := range uint64(50) {
				flows, err := permute(tc.from, to, seed)
				if err != nil {
					t.Fatal(err)
				}
				checkPermutation(t, tc.from, to, flows)
				again, _ := permute(tc.from, to, seed)
				if diff := cmp.Diff(names(flows), names(again)); diff != "" {
					t.Fatalf("seed %d: not deterministic", seed)
				}
				if seed == 0 {
					first = flows
				}
			}
			if len(tc.from) > 3 {
				other, _ := permute(tc.from, to, 99)
				if cmp.Equal(names(first), names(other)) {
					t.Errorf("seeds 0 and 99 drew the same permutation")
				}
			}
		})
	}
	if _, err := permute(all[:1], all[:1], 1); err == nil {
		t.Error("one endpoint: no error")
	}
	if _, err := permute(all[:2], all[:3], 1); err == nil {
		t.Error("2 senders, 3 receivers: no error")
	}
}

// TestPermutationWorkload resolves permutation and all-to-all perf
// workloads on the laptop topology (8 GPU NICs).
func TestPermutationWorkload(t *testing.T) {
	src := `name: perm
topology: laptop
duration: 1ms
seed: 5
workloads:
  - {name: everyone, kind: perf, pattern: permutation, size: 1MB, iters: 1}
  - {name: racks, kind: perf, pattern: permutation, from: "host[1-2]", to: "host[3-4]", iters: 1}
  - {name: a2a, kind: perf, pattern: all-to-all, from: "host[1-2]:gpu0", iters: 1, mode: metaroce, paths: 8, qps: 2}
  - {name: pairs, kind: perf, from: host1:gpu0, to: host2:gpu0}
`
	s, err := Parse("perm.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ev := s.Workload("everyone")
	if len(ev.From) != 8 || len(ev.Flows) != 8 || ev.Pattern != PatternPermutation {
		t.Fatalf("everyone: %d senders, %d flows, pattern %q", len(ev.From), len(ev.Flows), ev.Pattern)
	}
	checkPermutation(t, ev.From, ev.To, ev.Flows)
	if diff := cmp.Diff(names(ev.Flows), names(ev.Permutation(5))); diff != "" {
		t.Errorf("Permutation(file seed) differs from the resolved flows:\n%s", diff)
	}
	checkPermutation(t, ev.From, ev.To, ev.Permutation(6))
	racks := s.Workload("racks")
	checkPermutation(t, racks.From, racks.To, racks.Flows)
	for _, f := range racks.Flows {
		if f.From.Node.Name > "host2" || f.To.Node.Name < "host3" {
			t.Errorf("racks: flow %s leaves the selection", f)
		}
	}
	a2a := s.Workload("a2a")
	if len(a2a.Flows) != 2 || a2a.Paths != 8 || a2a.QPs != 2 {
		t.Errorf("a2a: %d flows (want 2), paths %d, qps %d", len(a2a.Flows), a2a.Paths, a2a.QPs)
	}
	if p := s.Workload("pairs"); p.Pattern != PatternPairs || len(p.Flows) != 1 || p.Paths != 1 {
		t.Errorf("pairs: pattern %q, %d flows, paths %d", p.Pattern, len(p.Flows), p.Paths)
	}
}
