package compliance

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/endpoint"
)

var update = flag.Bool("update", false, "rewrite spec_gen.go and docs/compliance-coverage.md")

const specPath = "../../docs/metaroce-spec.md"

var reqRe = regexp.MustCompile(`(?s)\*\*(MR-\d+\.\d+)\*\* (MUST NOT|MUST|SHOULD|MAY):?\s+(.*?)(?:\n\* |\n\n|\n\*\*|$)`)

// parseSpec reads the numbered requirements of the specification.
func parseSpec(t *testing.T) []Requirement {
	b, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	lv := map[string]Level{"MUST": Must, "MUST NOT": MustNot, "SHOULD": Should, "MAY": May}
	var out []Requirement
	for _, m := range reqRe.FindAllStringSubmatch(string(b), -1) {
		text := strings.ReplaceAll(strings.Join(strings.Fields(m[3]), " "), "`", "")
		if r := []rune(text); len(r) > 110 {
			text = string(r[:107])
			text = text[:strings.LastIndex(text, " ")] + " …"
		}
		out = append(out, Requirement{ID: m[1], Level: lv[m[2]], Text: text})
	}
	return out
}

// TestSpecMatchesRegistry keeps spec_gen.go equal to the specification's
// numbered requirements (IDs unique, in order, same keyword and text).
func TestSpecMatchesRegistry(t *testing.T) {
	got := parseSpec(t)
	if *update {
		var b strings.Builder
		b.WriteString("// Requirements extracted from docs/metaroce-spec.md; TestSpecMatchesRegistry fails when they differ and rewrites this file with -update.\n\npackage compliance\n\n")
		b.WriteString("// spec lists every numbered requirement of docs/metaroce-spec.md, in order.\nvar spec = []Requirement{\n")
		names := map[Level]string{Must: "Must", MustNot: "MustNot", Should: "Should", May: "May"}
		for _, r := range got {
			fmt.Fprintf(&b, "\t{%q, %s, %q},\n", r.ID, names[r.Level], r.Text)
		}
		b.WriteString("}\n")
		if err := os.WriteFile("spec_gen.go", []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	seen := map[string]bool{}
	for _, r := range got {
		if seen[r.ID] {
			t.Errorf("%s numbered twice in the specification", r.ID)
		}
		seen[r.ID] = true
	}
	if len(got) != len(spec) {
		t.Fatalf("specification has %d requirements, registry %d (go test ./lab/compliance -run TestSpec -update)", len(got), len(spec))
	}
	for i := range got {
		if got[i] != spec[i] {
			t.Errorf("requirement %d: spec %+v, registry %+v (run with -update)", i, got[i], spec[i])
		}
	}
}

// TestRegistryValid: every case cites known IDs and every MUST has a case.
func TestRegistryValid(t *testing.T) {
	if err := Validate(Cases()); err != nil {
		t.Fatal(err)
	}
}

// TestValidateRefusesUnknownID: a case citing an ID the spec lacks stops
// the suite before it starts.
func TestValidateRefusesUnknownID(t *testing.T) {
	cases := append(Cases(), Case{ID: "x/bogus", Cites: []string{"MR-99.1"}, Run: func(*T) {}})
	_, err := RunCases(t.Context(), cases, Options{}, nil)
	if err == nil || !strings.Contains(err.Error(), "MR-99.1") {
		t.Fatalf("RunCases with an unknown ID: %v", err)
	}
	var u *ErrUsage
	if !errors.As(err, &u) {
		t.Errorf("error %v is not a usage error", err)
	}
	cases = Cases()[1:] // drop wire/rc-write: MR-1.3 loses its only case
	if err := Validate(cases); err == nil || !strings.Contains(err.Error(), "MR-1.3 MUST has no case") {
		t.Errorf("Validate without the only case of MR-1.3: %v", err)
	}
}

// TestCoverageDoc keeps docs/compliance-coverage.md generated.
func TestCoverageDoc(t *testing.T) {
	const path = "../../docs/compliance-coverage.md"
	want := CoverageMarkdown(Cases())
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is stale: go test ./lab/compliance -run TestCoverageDoc -update", path)
	}
}

func TestSelect(t *testing.T) {
	all := Cases()
	for _, tc := range []struct {
		m             endpoint.Mode
		include, skip []string
		want          int // -1: error
	}{
		{endpoint.ModeMetaRoCE, nil, nil, len(all)},
		{endpoint.ModeRoCEv2, []string{"meta/*"}, nil, 0},
		{endpoint.ModeMetaRoCE, []string{"meta/*"}, nil, 11},
		{endpoint.ModeMetaRoCE, []string{"MR-5.18"}, nil, 1},
		{endpoint.ModeMetaRoCE, []string{"rc"}, []string{"rc/rnr"}, 12},
		{endpoint.ModeMetaRoCE, []string{"nope/*"}, nil, -1},
		{endpoint.ModeMetaRoCE, []string{"["}, nil, -1},
	} {
		got, err := Select(all, tc.m, tc.include, tc.skip)
		if tc.want < 0 {
			if err == nil {
				t.Errorf("Select(%v, %v): no error", tc.include, tc.skip)
			}
			continue
		}
		if err != nil || len(got) != tc.want {
			t.Errorf("Select(%s, %v, %v) = %d cases, %v; want %d", tc.m, tc.include, tc.skip, len(got), err, tc.want)
		}
	}
}
