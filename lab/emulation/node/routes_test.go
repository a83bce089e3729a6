package node

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/switchmodel"
)

func TestRouteTableJSON(t *testing.T) {
	r := func(prefix string, ports ...int) switchmodel.Route {
		return switchmodel.Route{Prefix: netip.MustParsePrefix(prefix), Ports: ports}
	}
	for _, c := range []struct {
		name  string
		table RouteTable
		sets  int
	}{
		{"empty", RouteTable{}, 0},
		{"one", RouteTable{r("10.0.0.0/31", 1)}, 1},
		{"shared ports", RouteTable{r("10.0.0.0/31", 2, 3), r("10.0.0.2/31", 2, 3), r("10.0.0.4/31", 2, 3)}, 1},
		// Sets interleave; each is written once and the order is kept.
		{"interleaved", RouteTable{r("10.0.0.0/31", 1), r("10.0.0.2/31", 2), r("10.0.0.4/31", 1), r("fd00::/127", 1)}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.table)
			if err != nil {
				t.Fatal(err)
			}
			var raw routeTableJSON
			if err := json.Unmarshal(b, &raw); err != nil {
				t.Fatal(err)
			}
			if len(raw.PortSets) != c.sets {
				t.Errorf("%s: %d port sets, want %d", b, len(raw.PortSets), c.sets)
			}
			var back RouteTable
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.table, back, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
	var bad RouteTable
	for _, c := range []struct{ in, want string }{
		{`{"port_sets":[[1]],"prefixes":["10.0.0.0/31"],"sets":[]}`, "1 prefixes but 0 sets"},
		{`{"port_sets":[[1]],"prefixes":["10.0.0.0/31"],"sets":[1]}`, "port set 1 of 1"},
		{`{"port_sets":[[1]],"prefixes":["10.0.0.0/33"],"sets":[0]}`, "10.0.0.0/33"},
	} {
		if err := json.Unmarshal([]byte(c.in), &bad); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.in, err, c.want)
		}
	}
}
