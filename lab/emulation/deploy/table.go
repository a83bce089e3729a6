package deploy

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteTable writes nodes as an aligned table: name, kind, role,
// namespace, PID, addresses, interfaces, the user's image when a node has
// one (and health when withHealth).
func WriteTable(w io.Writer, nodes []Node, withHealth bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "NODE\tKIND\tROLE\tNETNS\tPID\tADDRESSES\tINTERFACES"
	images := slices.ContainsFunc(nodes, func(n Node) bool { return n.Image != "" })
	if images {
		head += "\tIMAGE"
	}
	if withHealth {
		head += "\tHEALTH"
	}
	fmt.Fprintln(tw, head)
	for _, n := range nodes {
		pid := "-"
		if n.PID != 0 {
			pid = strconv.Itoa(n.PID)
		}
		row := []string{n.Name, string(n.Kind), dash(string(n.Role)), n.NetNS, pid, dash(strings.Join(n.Addresses, ",")), ifSummary(n.Interfaces)}
		if images {
			row = append(row, dash(n.Image))
		}
		if withHealth {
			row = append(row, dash(n.Health))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ifSummary lists up to four interfaces, then a count.
func ifSummary(ifs []string) string {
	if len(ifs) <= 4 {
		return dash(strings.Join(ifs, " "))
	}
	return fmt.Sprintf("%s … (%d)", strings.Join(ifs[:3], " "), len(ifs))
}
