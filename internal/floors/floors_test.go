package floors

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/rocelab/rocelab"

// floorOf is docs/design.md's folder map. A room may import rooms on lower
// floors; packages inside one room may import each other.
var floorOf = map[string]int{
	"core":        0,
	"internal":    0,
	"wire":        1,
	"topologies":  1,
	"workloads":   1,
	"switchmodel": 2,
	"endpoint":    2,
	"faults":      2,
	"lab":         3,
	"dashboards":  4,
	"cmd":         5,
	"deploy":      5,
}

// labGroupOf orders lab/'s groups: the two drivers side by side; above
// them the multi-machine wing (over emulation), the scenario front end and
// the compliance suite, none of which imports another.
var labGroupOf = map[string]int{"emulation": 0, "simulation": 0, "cluster": 1, "scenarios": 1, "compliance": 1}

// innerFloorOf orders the folders inside a lab group that has floors of
// its own (docs/design.md, "Inside lab/emulation"): a package may import
// packages of its own folder and of lower floors only.
var innerFloorOf = map[string]map[string]int{
	"emulation": {"base": 0, "datapath": 1, "node": 2, "control": 3, "jobs": 4, "tools": 5},
}

type pkg struct {
	ImportPath string
	ForTest    string
	Imports    []string
	Module     *struct{ Path string }
}

// room returns the top-level folder of a module package and its path below
// the module ("" when p is not in the module).
func room(p string) (top, rel string) {
	rel, ok := strings.CutPrefix(p, module+"/")
	if !ok {
		return "", ""
	}
	rel, _, _ = strings.Cut(rel, " ") // "p [p.test]"
	rel = strings.TrimSuffix(rel, "_test")
	top, _, _ = strings.Cut(rel, "/")
	return top, rel
}

func labGroup(rel string) string {
	parts := strings.Split(rel, "/")
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

// violation says why from may not import to, or "" when it may. Test code
// may also import a sibling room on the same floor (an endpoint test that
// runs endpoints across switchmodel's fabric), never one above.
func violation(from, to string, test bool) string {
	ft, frel := room(from)
	tt, trel := room(to)
	if tt == "" || ft == tt && ft != "lab" {
		return ""
	}
	ff, ok1 := floorOf[ft]
	tf, ok2 := floorOf[tt]
	switch {
	case !ok1:
		return "room " + ft + " is on no floor: add it to docs/design.md and floorOf"
	case !ok2:
		return "room " + tt + " is on no floor: add it to docs/design.md and floorOf"
	case ft == "lab" && tt == "lab":
		fg, tg := labGroup(frel), labGroup(trel)
		if fg == tg {
			return innerViolation(fg, frel, trel, test)
		}
		fl, ok1 := labGroupOf[fg]
		tl, ok2 := labGroupOf[tg]
		if !ok1 || !ok2 {
			return "lab/" + fg + " or lab/" + tg + " is not a lab group (emulation, simulation, scenarios, compliance)"
		}
		if tl >= fl {
			return "lab/" + fg + " may not import lab/" + tg
		}
		return ""
	case tf > ff:
		return "imports a higher floor"
	case tf == ff && !test:
		return "imports a sibling room on its own floor"
	}
	return ""
}

// innerViolation says why rel package from may not import to inside lab
// group g, or "" when it may (or g has no inner floors). Test code may
// import any floor of its group: a node test drives in-process nodes with
// the jobs floor's perf runner, a deploy test runs perf on the lab it
// deployed; no production import runs up.
func innerViolation(g, from, to string, test bool) string {
	floors, ok := innerFloorOf[g]
	if !ok {
		return ""
	}
	ff, fok := floors[innerFolder(from)]
	tf, tok := floors[innerFolder(to)]
	switch {
	case !fok || !tok:
		return "lab/" + g + "/" + innerFolder(from) + " or lab/" + g + "/" + innerFolder(to) + " is on no floor of lab/" + g + ": add it to docs/design.md and innerFloorOf"
	case innerFolder(from) == innerFolder(to) || test:
		return ""
	case tf >= ff:
		return "lab/" + g + "/" + innerFolder(from) + " may not import lab/" + g + "/" + innerFolder(to) + " (a floor not below its own)"
	}
	return ""
}

// innerFolder is the folder of rel (lab/GROUP/FOLDER/...) that sits on an
// inner floor ("" for lab/GROUP itself).
func innerFolder(rel string) string {
	parts := strings.Split(rel, "/")
	if len(parts) < 3 {
		return ""
	}
	return parts[2]
}

func TestViolation(t *testing.T) {
	m := module + "/"
	for _, tc := range []struct {
		from, to string
		test     bool
		bad      bool
	}{
		{m + "endpoint", m + "core/clock", false, false},
		{m + "endpoint", m + "switchmodel", false, true},
		{m + "endpoint_test", m + "switchmodel/fabric", true, false},
		{m + "endpoint [" + m + "endpoint.test]", m + "lab/simulation/simlab", true, true},
		{m + "wire", m + "lab/emulation/datapath/emu", false, true},
		{m + "lab/emulation/node", m + "lab/simulation/simlab", false, true},
		{m + "lab/scenarios/run", m + "lab/emulation/control/deploy", false, false},
		{m + "lab/emulation/node", m + "lab/scenarios/run", true, true},
		{m + "cmd/rocelab", m + "lab/scenarios/run", false, false},
		{m + "core/sim", m + "wire", true, true},
		{m + "endpoint/cc/dcqcn", m + "endpoint/cc", false, false},
		{m + "newroom", m + "wire", false, true},
		{m + "workloads/chakra", m + "core/clock", false, false},
		{m + "workloads/chakra", m + "topologies", false, true},
		{m + "lab/simulation/simlab", m + "workloads/chakra", false, false},
		{m + "wire", "golang.org/x/sys/unix", false, false},
		{m + "lab/cluster/agent", m + "lab/emulation/control/deploy", false, false},
		{m + "lab/emulation/control/deploy", m + "lab/cluster/agentapi", false, true},
		{m + "lab/scenarios/run", m + "lab/cluster/agent", false, true},
		{m + "lab/emulation/control/deploy", m + "lab/emulation/node", false, false},
		{m + "lab/emulation/node", m + "lab/emulation/node/nodeapi", false, false},
		{m + "lab/emulation/node/nodeapi", m + "lab/emulation/control/deploy", false, true},
		{m + "lab/emulation/datapath/emu", m + "lab/emulation/node", false, true},
		{m + "lab/emulation/node_test", m + "lab/emulation/jobs", true, false},
		{m + "lab/emulation/node", m + "lab/emulation/jobs", false, true},
		{m + "lab/emulation/node_test", m + "lab/emulation/nosuchfloor/x", true, true},
		{m + "lab/emulation/tools/demo", m + "lab/emulation/jobs", false, false},
		{m + "lab/emulation/jobs", m + "lab/emulation/tools/stats", false, true},
		{m + "lab/emulation/datapath/links", m + "lab/emulation/datapath/afpacket", false, false},
		{m + "lab/emulation/control/deploy", m + "lab/emulation/newfolder/x", false, true},
	} {
		if got := violation(tc.from, tc.to, tc.test) != ""; got != tc.bad {
			t.Errorf("violation(%s → %s, test=%v) = %v, want %v", tc.from, tc.to, tc.test, got, tc.bad)
		}
	}
}

// TestFloors walks `go list -deps -test` over the module and fails on an
// import that runs up (or sideways, outside tests).
func TestFloors(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is needed to list imports: %v", err)
	}
	cmd := exec.Command("go", "list", "-deps", "-test", "-json", module+"/...")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var bad []string
	seen := 0
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if top, _ := room(p.ImportPath); top == "" || strings.HasSuffix(p.ImportPath, ".test") {
			continue
		}
		seen++
		test := p.ForTest != "" || strings.HasSuffix(strings.Fields(p.ImportPath)[0], "_test")
		for _, imp := range p.Imports {
			if why := violation(p.ImportPath, imp, test); why != "" {
				bad = append(bad, p.ImportPath+" → "+imp+": "+why)
			}
		}
	}
	if seen < 30 {
		t.Fatalf("go list gave %d module packages; expected the whole tree", seen)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}
