package node

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"

	"github.com/rocelab/rocelab/switchmodel"
)

// RouteTable is a switch node's routes, in order. In its configuration
// file each distinct set of egress ports is written once and each route
// names its set by index ({"port_sets": [[...]], "prefixes": [...],
// "sets": [...]}, prefixes[i] over port_sets[sets[i]]): a spine of a
// 64-GPU zone has 1,527 routes, most over the same 32 ports, which as one
// object per route made a 523 KB file that every switch process decoded
// at start.
type RouteTable []switchmodel.Route

// routeTableJSON is a RouteTable as written.
type routeTableJSON struct {
	PortSets [][]int        `json:"port_sets"`
	Prefixes []netip.Prefix `json:"prefixes"`
	Sets     []int          `json:"sets"`
}

// MarshalJSON writes the table with its port sets interned.
func (t RouteTable) MarshalJSON() ([]byte, error) {
	out := routeTableJSON{Prefixes: make([]netip.Prefix, 0, len(t)), Sets: make([]int, 0, len(t))}
	index := map[string]int{}
	for _, r := range t {
		key := fmt.Sprint(r.Ports)
		i, ok := index[key]
		if !ok {
			i = len(out.PortSets)
			index[key] = i
			out.PortSets = append(out.PortSets, r.Ports)
		}
		out.Prefixes = append(out.Prefixes, r.Prefix)
		out.Sets = append(out.Sets, i)
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads a table written by MarshalJSON; routes share their
// port set's slice.
func (t *RouteTable) UnmarshalJSON(b []byte) error {
	var in routeTableJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	if len(in.Sets) != len(in.Prefixes) {
		return fmt.Errorf("routes: %d prefixes but %d sets", len(in.Prefixes), len(in.Sets))
	}
	out := make(RouteTable, len(in.Prefixes))
	for i, p := range in.Prefixes {
		s := in.Sets[i]
		if s < 0 || s >= len(in.PortSets) {
			return fmt.Errorf("routes: prefix %d (%s): port set %d of %d", i, p, s, len(in.PortSets))
		}
		out[i] = switchmodel.Route{Prefix: p, Ports: in.PortSets[s]}
	}
	*t = out
	return nil
}

// install adds the routes to sw, consecutive routes over the same ports
// in one batch.
func (t RouteTable) install(sw *switchmodel.Switch) error {
	for i := 0; i < len(t); {
		j := i + 1
		for j < len(t) && slices.Equal(t[j].Ports, t[i].Ports) {
			j++
		}
		prefixes := make([]netip.Prefix, 0, j-i)
		for _, r := range t[i:j] {
			prefixes = append(prefixes, r.Prefix)
		}
		if err := sw.AddRoutes(prefixes, t[i].Ports...); err != nil {
			return fmt.Errorf("install routes: %w", err)
		}
		i = j
	}
	return nil
}
