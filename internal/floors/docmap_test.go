package floors

import (
	"encoding/json"
	"errors"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The doc map: a package's doc names every folder below it that holds Go
// packages, so that reading package docs from the top finds the whole
// tree. A package is named in the doc of its nearest ancestor that is a
// package, by its path relative to that ancestor: lab/emulation's doc names
// base/sandbox (base is no package), base/sandbox's names netns. A package
// with no ancestor package (core, lab, internal/floors, cmd/rocelab) is
// named in docs/design.md's layout instead, like every top-level folder.
// Nothing is skipped: internal/'s helpers are rooms of floor 0 like any
// other, and go list leaves out testdata.

// isWord reports whether c may be part of a folder name.
func isWord(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// named reports whether doc names the folder rel: rel appears with no
// letter, digit, '_' or '-' on either side, so "netns" is named by
// "`netns`", "sandbox/netns" or "base/sandbox/netns (namespaces)", and not
// by "netnstest".
func named(doc, rel string) bool {
	for i := 0; ; {
		j := strings.Index(doc[i:], rel)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(rel)
		if (j == 0 || !isWord(doc[j-1])) && (end == len(doc) || !isWord(doc[end])) {
			return true
		}
		i = j + 1
	}
}

// unnamed returns, for packages given by folder (relative to the module,
// "/"-separated) and doc, every package its nearest ancestor package's doc
// does not name, as "ancestor: rel", and the packages that have no
// ancestor package.
func unnamed(docs map[string]string) (bad, top []string) {
	for dir := range docs {
		anc := dir
		for {
			i := strings.LastIndexByte(anc, '/')
			if i < 0 {
				anc = ""
				break
			}
			anc = anc[:i]
			if _, ok := docs[anc]; ok {
				break
			}
		}
		if anc == "" {
			top = append(top, dir)
			continue
		}
		if rel := dir[len(anc)+1:]; !named(docs[anc], rel) {
			bad = append(bad, anc+": "+rel)
		}
	}
	sort.Strings(bad)
	sort.Strings(top)
	return bad, top
}

func TestNamed(t *testing.T) {
	for _, c := range []struct {
		doc, rel string
		want     bool
	}{
		{"Subfolders: netnstest makes namespaces.", "netnstest", true},
		{"see `netns` and `docker`", "netns", true},
		{"base/sandbox/netns: namespaces", "netns", true},
		{"base/sandbox/netns: namespaces", "sandbox/netns", true},
		{"netnstest only", "netns", false},
		{"the netns-free runtime", "netns", false},
		{"", "netns", false},
		{"base (state, sandbox, proc)", "base/sandbox", false},
		{"base/sandbox, base/proc", "base/proc", true},
		{"agent (+agenttest)", "agent/agenttest", false},
		{"agent/agenttest", "agent", true},
	} {
		if got := named(c.doc, c.rel); got != c.want {
			t.Errorf("named(%q, %q) = %v, want %v", c.doc, c.rel, got, c.want)
		}
	}
}

func TestUnnamed(t *testing.T) {
	docs := map[string]string{
		"lab":                        "lab/emulation and lab/cluster",
		"lab/emulation":              "base/sandbox, base/state",
		"lab/emulation/base/sandbox": "netns",
		"lab/emulation/base/sandbox/netns/netnstest": "",
		"lab/emulation/base/state":                   "",
		"lab/emulation/base/proc":                    "", // lab/emulation does not name base/proc
		"lab/emulation/datapath/emu":                 "",
		"lab/cluster/agent":                          "", // lab/cluster is no package here: lab must name cluster/agent
		"core":                                       "",
		"core/sim":                                   "core/clock only",
	}
	bad, top := unnamed(docs)
	wantBad := []string{
		"core: sim",
		"lab/emulation/base/sandbox: netns/netnstest",
		"lab/emulation: base/proc",
		"lab/emulation: datapath/emu",
		"lab: cluster/agent",
	}
	if strings.Join(bad, "\n") != strings.Join(wantBad, "\n") {
		t.Errorf("unnamed: got\n%s\nwant\n%s", strings.Join(bad, "\n"), strings.Join(wantBad, "\n"))
	}
	if want := []string{"core", "lab"}; strings.Join(top, " ") != strings.Join(want, " ") {
		t.Errorf("top: got %v, want %v", top, want)
	}
}

// listed is what the doc map needs of `go list -json`.
type listed struct {
	ImportPath     string
	Dir            string
	GoFiles        []string
	CgoFiles       []string
	IgnoredGoFiles []string
}

// packageDoc returns the package doc comments of p's non-test files,
// whatever their build constraints.
func packageDoc(t *testing.T, p listed) string {
	var b strings.Builder
	fset := token.NewFileSet()
	for _, files := range [][]string{p.GoFiles, p.CgoFiles, p.IgnoredGoFiles} {
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if f.Doc != nil {
				b.WriteString(f.Doc.Text())
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

// TestDocMap fails when a package's folder has a folder of Go packages
// below it that its doc does not name (see unnamed), or when a package
// with no ancestor package is missing from docs/design.md's layout.
func TestDocMap(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is needed to list packages: %v", err)
	}
	out, err := exec.Command("go", "list", "-e", "-json", module+"/...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	docs := map[string]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		_, rel := room(p.ImportPath)
		if rel == "" {
			continue
		}
		docs[rel] = packageDoc(t, p)
	}
	if len(docs) < 30 {
		t.Fatalf("go list gave %d module packages; expected the whole tree", len(docs))
	}
	bad, top := unnamed(docs)
	for _, b := range bad {
		ancestor, rel, _ := strings.Cut(b, ": ")
		t.Errorf("%s's package doc does not name %s (%s/%s)", ancestor, rel, ancestor, rel)
	}
	design, err := os.ReadFile("../../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	layout, _, _ := strings.Cut(string(design), "\n## Boundaries")
	_, layout, _ = strings.Cut(layout, "\n## Layout")
	if layout == "" {
		t.Fatal(`docs/design.md has no "## Layout" section before "## Boundaries"`)
	}
	for _, dir := range top {
		if top, _, _ := strings.Cut(dir, "/"); top != dir && named(layout, top+"/") && named(layout, dir[len(top)+1:]) {
			continue
		}
		if !named(layout, dir) {
			t.Errorf("docs/design.md's layout does not name %s, which has no package above it", dir)
		}
	}
}
