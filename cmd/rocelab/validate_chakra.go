package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rocelab/rocelab/workloads/chakra"
)

// chakraSummary is what validate --chakra says of a valid trace folder.
type chakraSummary struct {
	Dir    string         `json:"dir"`
	Prefix string         `json:"prefix"`
	Valid  bool           `json:"valid"`
	Ranks  int            `json:"ranks"`
	Nodes  map[string]int `json:"nodes,omitempty"` // by kind, over every rank
	Errors []string       `json:"errors,omitempty"`
}

// validateChakra checks the Chakra execution traces PREFIX.RANK.et in dir:
// every problem as FILE: node ID ("NAME"): message (exit 2), else a
// summary of the ranks and their nodes by kind.
func validateChakra(opts *options, dir, prefix string) error {
	if prefix == "" {
		p, err := chakra.OnlyPrefix(dir)
		if err != nil {
			return badInput(err)
		}
		prefix = p
	}
	traces, err := chakra.LoadDir(dir, prefix)
	var el chakra.ErrorList
	if errors.As(err, &el) {
		res := chakraSummary{Dir: dir, Prefix: prefix}
		for _, e := range el {
			res.Errors = append(res.Errors, e.Error())
		}
		if opts.wantJSON() {
			if jerr := opts.printJSON(res); jerr != nil {
				return jerr
			}
		} else {
			for _, e := range el {
				fmt.Fprintln(opts.stderr, e)
			}
		}
		return badInput(fmt.Errorf("%s/%s.*.et: %d error%s", dir, prefix, len(el), plural(len(el))))
	}
	if err != nil {
		return badInput(err)
	}
	res := chakraSummary{Dir: dir, Prefix: prefix, Valid: true, Ranks: len(traces), Nodes: map[string]int{}}
	for _, t := range traces {
		for _, n := range t.Nodes {
			res.Nodes[n.Kind.String()]++
		}
	}
	if opts.wantJSON() {
		return opts.printJSON(res)
	}
	kinds := make([]string, 0, len(res.Nodes))
	for k, n := range res.Nodes {
		kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(kinds)
	fmt.Fprintf(opts.stdout, "%s/%s.*.et: ok — %d ranks; nodes: %s\n", dir, prefix, res.Ranks, strings.Join(kinds, ", "))
	return nil
}
