package deploy

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteTable writes nodes as an aligned table: name, kind, role, the
// machine in a lab that spans machines, namespace, PID, addresses,
// interfaces, the user's image when a node has one (and health when
// withHealth).
func WriteTable(w io.Writer, nodes []Node, withHealth bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	machines := slices.ContainsFunc(nodes, func(n Node) bool { return n.Machine != "" })
	head := "NODE\tKIND\tROLE\tNETNS\tPID\tADDRESSES\tINTERFACES"
	if machines {
		head = "NODE\tKIND\tROLE\tMACHINE\tNETNS\tPID\tADDRESSES\tINTERFACES"
	}
	groups := slices.ContainsFunc(nodes, func(n Node) bool { return n.Group != "" })
	if groups {
		// Node groups: members share the PID; the column says which.
		head = strings.Replace(head, "\tPID\t", "\tPID\tGROUP\t", 1)
	}
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
		if groups {
			row = slices.Insert(row, 5, dash(n.Group))
		}
		if machines {
			row = slices.Insert(row, 3, dash(n.Machine))
		}
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

// WriteMachines writes where a lab that spans machines runs: a line per
// machine (agent, underlay address, nodes, share of the load) and one per
// link between machines, with its VNI. A lab on one machine writes
// nothing.
func WriteMachines(w io.Writer, l *Lab) error {
	if len(l.Machines) == 0 || l.Placement == nil {
		return nil
	}
	var total float64
	for _, v := range l.Placement.Load {
		total += v
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MACHINE\tAGENT\tUNDERLAY\tNODES\tLOAD")
	for _, m := range l.Machines {
		share := 0.0
		if total > 0 {
			share = 100 * l.Placement.Load[m.Name] / total
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.0f%%\n", m.Name, m.Agent, m.Underlay, m.Nodes, share)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d links cross machines (VXLAN):\n", len(l.Placement.Crossings))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range l.Placement.Crossings {
		fmt.Fprintf(tw, "  %s\t%s -> %s\tvni %d\n", c.Name, c.A, c.B, c.VNI)
	}
	return tw.Flush()
}
