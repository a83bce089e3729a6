package deploy_test

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/google/go-cmp/cmp"
)

// The soak (soak_linux_test.go, `make soak`) samples every node process's
// resources; this file holds how it judges them, tested here in `make
// test`.

// usage is one sample of a node process.
type usage struct {
	RSS        float64 // bytes (VmRSS)
	Heap       float64 // live heap bytes after the last GC (node_heap_live_bytes)
	Goroutines float64
	FDs        float64
}

// resource names the fields of usage, for the table and the verdict.
var resources = []struct {
	name  string
	get   func(usage) float64
	unit  func(float64) string
	ratio float64 // growth bound of last over first (0: none)
	// sustained: sustained growth is a leak. Not for RSS, which keeps the
	// pages of the biggest burst so far (it grows in steps as bursts
	// break records, a high-water mark); the live heap after a GC is what
	// a leak grows.
	sustained bool
}{
	{"rss", func(u usage) float64 { return u.RSS }, mb, 1.5, false},
	{"heap", func(u usage) float64 { return u.Heap }, mb, 0, true},
	{"goroutines", func(u usage) float64 { return u.Goroutines }, func(v float64) string { return fmt.Sprintf("%.0f", v) }, 0, true},
	{"fds", func(u usage) float64 { return u.FDs }, func(v float64) string { return fmt.Sprintf("%.0f", v) }, 0, true},
}

func mb(v float64) string { return fmt.Sprintf("%.1fM", v/(1<<20)) }

// soakVerdict judges one node's quiet samples (taken at the same point of
// every round, after warm-up): RSS may not end above ratio × its first
// value, and no resource may grow in a sustained way — every sample of
// the second half above every sample of the first half, ending higher
// than it started. It returns what is wrong ("" when flat).
func soakVerdict(quiet []usage) []string {
	if len(quiet) < 4 {
		return []string{fmt.Sprintf("%d samples after warm-up: too few to judge (run longer)", len(quiet))}
	}
	var bad []string
	for _, r := range resources {
		vs := make([]float64, len(quiet))
		for i, u := range quiet {
			vs[i] = r.get(u)
		}
		first, last := vs[0], vs[len(vs)-1]
		if r.ratio > 0 && last > r.ratio*first {
			bad = append(bad, fmt.Sprintf("%s grew from %s to %s (more than ×%.1f)", r.name, r.unit(first), r.unit(last), r.ratio))
			continue
		}
		half := len(vs) / 2
		if r.sustained && slices.Min(vs[len(vs)-half:]) > slices.Max(vs[:half]) && last > first {
			bad = append(bad, fmt.Sprintf("%s keeps growing: %s", r.name, seriesString(vs, r.unit)))
		}
	}
	return bad
}

func seriesString(vs []float64, unit func(float64) string) string {
	var s []string
	for _, v := range vs {
		s = append(s, unit(v))
	}
	return strings.Join(s, " ")
}

// soakTable writes, per node, the first and last quiet sample and the
// highest of all samples of each resource.
func soakTable(w io.Writer, nodes []string, quiet, all map[string][]usage) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "NODE\t")
	for _, r := range resources {
		fmt.Fprintf(tw, "%s first\tlast\tmax\t", r.name)
	}
	fmt.Fprintln(tw)
	for _, n := range nodes {
		fmt.Fprintf(tw, "%s\t", n)
		for _, r := range resources {
			q := quiet[n]
			if len(q) == 0 {
				fmt.Fprint(tw, "-\t-\t-\t")
				continue
			}
			hi := 0.0
			for _, u := range append(slices.Clone(all[n]), q...) {
				hi = max(hi, r.get(u))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t", r.unit(r.get(q[0])), r.unit(r.get(q[len(q)-1])), r.unit(hi))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

func TestSoakVerdict(t *testing.T) {
	const M = 1 << 20
	flat := func(n int) []usage {
		var out []usage
		for i := range n {
			out = append(out, usage{RSS: 20*M + float64(i%3)*M, Heap: 8*M + float64(i%2)*M, Goroutines: 12 + float64(i%2), FDs: 14})
		}
		return out
	}
	grow := func(n int, f func(i int, u *usage)) []usage {
		out := flat(n)
		for i := range out {
			f(i, &out[i])
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		quiet []usage
		want  []string // substrings, one per problem
	}{
		{"flat with noise", flat(10), nil},
		{"too short", flat(3), []string{"too few"}},
		{"rss +60%", grow(10, func(i int, u *usage) { u.RSS = 20*M + float64(i)*M*1.3 }), []string{"rss grew from 20.0M to 31.7M"}},
		{"rss +30% once, back", grow(10, func(i int, u *usage) {
			if i == 5 {
				u.RSS = 26 * M
			}
		}), nil},
		{"rss in steps, a high-water mark", grow(10, func(i int, u *usage) { u.RSS = 20*M + float64(i/3)*M }), nil},
		{"live heap a megabyte a round", grow(8, func(i int, u *usage) { u.Heap = 8*M + float64(i)*M }), []string{"heap keeps growing: 8.0M 9.0M"}},
		{"a goroutine a round", grow(8, func(i int, u *usage) { u.Goroutines = 12 + float64(i) }), []string{"goroutines keeps growing: 12 13 14"}},
		{"an fd every other round", grow(9, func(i int, u *usage) { u.FDs = 14 + float64(i/2) }), []string{"fds keeps growing"}},
		{"one step up then flat", grow(10, func(i int, u *usage) {
			// A connection pool that fills once: second half above the
			// first half's start, but not above all of it.
			if i >= 3 {
				u.FDs = 15
			}
		}), nil},
		{"two leaks", grow(6, func(i int, u *usage) { u.Goroutines, u.FDs = 12+float64(i), 14+float64(i) }), []string{"goroutines", "fds"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := soakVerdict(tc.quiet)
			if len(got) != len(tc.want) {
				t.Fatalf("soakVerdict = %q, want %d problems %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to say %q", i, got[i], w)
				}
			}
		})
	}
}

func TestSoakTable(t *testing.T) {
	var b strings.Builder
	q := map[string][]usage{"rtsw1": {{RSS: 10 << 20, Heap: 4 << 20, Goroutines: 9, FDs: 20}, {RSS: 11 << 20, Heap: 4 << 20, Goroutines: 9, FDs: 20}}}
	a := map[string][]usage{"rtsw1": {{RSS: 15 << 20, Heap: 6 << 20, Goroutines: 30, FDs: 22}}}
	soakTable(&b, []string{"rtsw1", "gone"}, q, a)
	got := strings.Fields(b.String())
	want := []string{"NODE", "rss", "first", "last", "max", "heap", "first", "last", "max", "goroutines", "first", "last", "max", "fds", "first", "last", "max",
		"rtsw1", "10.0M", "11.0M", "15.0M", "4.0M", "4.0M", "6.0M", "9", "9", "30", "20", "20", "22",
		"gone", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("table (-want +got):\n%s\n%s", diff, b.String())
	}
}
