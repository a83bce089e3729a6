package floors

import (
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDrawFloors draws the tree as floors from `go list`, top floor first:
// each room with its packages, lab/'s groups, and lab/emulation's inner
// floors with the production imports between them (an arrow a → b: n
// says n imports run from floor a down to floor b). Run it with -v to see
// the drawing; it fails if a package sits on no floor.
func TestDrawFloors(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rooms := map[string][]string{}            // top room → packages below it
	inner := map[string]map[string][]string{} // lab group → inner folder → packages
	arrows := map[string]map[[2]string]int{}  // lab group → (from, to) folder → imports
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		top, rel := room(f[0])
		if _, ok := floorOf[top]; !ok {
			t.Errorf("%s: room %s is on no floor", rel, top)
			continue
		}
		rooms[top] = append(rooms[top], rel)
		g := labGroup(rel)
		if top != "lab" || innerFloorOf[g] == nil || innerFolder(rel) == "" {
			continue
		}
		if _, ok := innerFloorOf[g][innerFolder(rel)]; !ok {
			t.Errorf("%s: folder on no floor of lab/%s", rel, g)
		}
		if inner[g] == nil {
			inner[g], arrows[g] = map[string][]string{}, map[[2]string]int{}
		}
		inner[g][innerFolder(rel)] = append(inner[g][innerFolder(rel)], rel)
		for _, imp := range f[1:] {
			if t2, r2 := room(imp); t2 == "lab" && labGroup(r2) == g && innerFolder(r2) != innerFolder(rel) {
				arrows[g][[2]string{innerFolder(rel), innerFolder(r2)}]++
			}
		}
	}
	var b strings.Builder
	byFloor := func(m map[string]int) []string {
		keys := slices.Collect(maps.Keys(m))
		slices.SortFunc(keys, func(a, b string) int { return m[b] - m[a] + boolInt(m[a] == m[b])*strings.Compare(a, b) })
		return keys
	}
	for _, top := range byFloor(floorOf) {
		if top != "lab" {
			fmt.Fprintf(&b, "%d %-12s %s\n", floorOf[top], top+"/", strings.Join(rooms[top], " "))
			continue
		}
		fmt.Fprintf(&b, "%d lab/\n", floorOf[top])
		for _, g := range byFloor(labGroupOf) {
			var pkgs []string
			for _, p := range rooms[top] {
				if labGroup(p) == g && (innerFloorOf[g] == nil || innerFolder(p) == "") {
					pkgs = append(pkgs, strings.TrimPrefix(p, "lab/"))
				}
			}
			fmt.Fprintf(&b, "    %d %-11s %s\n", labGroupOf[g], g+"/", strings.Join(pkgs, " "))
			for _, f := range byFloor(innerFloorOf[g]) {
				var short []string
				for _, p := range inner[g][f] {
					short = append(short, strings.TrimPrefix(strings.TrimPrefix(p, "lab/"+g+"/"+f+"/"), "lab/"+g+"/"))
				}
				fmt.Fprintf(&b, "        %d %-9s %s\n", innerFloorOf[g][f], f+"/", strings.Join(short, " "))
			}
			for _, a := range slices.SortedFunc(maps.Keys(arrows[g]), func(x, y [2]string) int { return strings.Compare(x[0]+x[1], y[0]+y[1]) }) {
				fmt.Fprintf(&b, "          %s → %s: %d\n", a[0], a[1], arrows[g][a])
			}
		}
	}
	t.Log("\n" + b.String())
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
