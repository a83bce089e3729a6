package report

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/rocelab/rocelab/topologies/graph"
)

// LayoutFile is the name of the drawing of the scenario's topology in a
// report, which `rocelab dashboard --replay` draws the recording on.
const LayoutFile = "layout.json"

// Layout is LayoutFile's content: the drawing and the names it belongs to.
type Layout struct {
	Scenario string       `json:"scenario"`
	Topology string       `json:"topology"`
	Layout   graph.Layout `json:"layout"`
}

// writeLayout writes the topology's drawing (compact above
// graph.CompactHosts hosts, as `rocelab graph` draws it).
func writeLayout(dir string, d Data) error {
	if d.Scenario == nil || d.Scenario.Topology == nil {
		return nil
	}
	t := d.Scenario.Topology
	b, err := json.Marshal(Layout{Scenario: d.Scenario.Name, Topology: t.Name, Layout: graph.NewLayout(t, graph.Options{})})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, LayoutFile), b, 0o644)
}
