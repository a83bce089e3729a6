package stats

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rocelab/rocelab/core/units"
)

// Legend says the tables' units, for the line above them.
const Legend = "RX, TX: rates in fabric time; DEPTH, PEAK: bytes (KB = 1000, KiB = 1024); ECN, PFC, XOFF, CNP, RETX, DROPS, BAD-ICRC: totals since the node started; PAUSED: fabric time"

// WriteTable writes r as aligned tables: ports (when there are any),
// active queues, and NICs and QPs when there are any.
func WriteTable(w io.Writer, r Report) error {
	for _, d := range r.Dead {
		if d.Agent != "" {
			fmt.Fprintf(w, "%s: UNREACHABLE: its rows are missing: %s\n", d.Node, d.Agent)
			continue
		}
		fmt.Fprintf(w, "%s: DEAD (%s): its rows are missing; rocelab restart %s brings it back\n", d.Node, d.Reason, d.Node)
	}
	if len(r.Dead) > 0 {
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	first := true // a blank line between tables, not before the first
	for _, t := range []table{
		tableOf(r.Ports, []string{"NODE", "PORT", "IFNAME", "RX", "TX", "DEPTH", "PEAK", "ECN", "PFC-TX", "PFC-RX", "PAUSED", "DROPS"}, func(p Port) []string {
			return []string{p.Node, p.Port, dash(p.IfName), Rate(p.RxBps), Rate(p.TxBps), Bytes(p.Depth), Bytes(p.Peak),
				count(p.ECN), count(p.PFCTx), count(p.PFCRx), Seconds(p.Paused), count(p.DropsTotal())}
		}),
		tableOf(r.Queues, []string{"NODE", "PORT", "TC", "TX", "DEPTH", "PEAK", "ECN", "XOFF-TX", "PFC-RX", "PAUSED", "DROPS"}, func(q Queue) []string {
			return []string{q.Node, q.Port, q.TC, Rate(q.TxBps), Bytes(q.Depth), Bytes(q.Peak), count(q.ECN), count(q.PFCTx),
				count(q.PFCRx), Seconds(q.Paused), drops(q.Drops)}
		}),
		tableOf(r.NICs, []string{"NIC", "TX", "RX", "CNP-RX", "PFC-RX", "PAUSED", "BAD-ICRC"}, func(n NIC) []string {
			return []string{n.Node, Rate(n.TxBps), Rate(n.RxBps), count(n.CNPs), count(n.PFCRx), Seconds(n.Paused), count(n.BadICRC)}
		}),
		tableOf(r.QPs, []string{"NIC", "QP", "TX", "RX", "RETX", "CNP-TX", "CNP-RX"}, func(q QP) []string {
			return []string{q.Node, q.QP, Rate(q.TxBps), Rate(q.RxBps), count(q.Retransmits), count(q.CNPsTx), count(q.CNPsRx)}
		}),
	} {
		if len(t) == 1 {
			continue // the header alone: no rows
		}
		if !first {
			fmt.Fprintln(w)
		}
		first = false
		for _, cells := range t {
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// table is one table of WriteTable: the header, then a row an item.
type table [][]string

// tableOf lays items out as a table under header; cells gives an item's
// row.
func tableOf[T any](items []T, header []string, cells func(T) []string) table {
	t := table{header}
	for _, it := range items {
		t = append(t, cells(it))
	}
	return t
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func count(v float64) string {
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%.0f", v)
}

// drops formats drops by reason: "reason=n,…" or "0".
func drops(m map[string]float64) string {
	if len(m) == 0 {
		return "0"
	}
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s=%.0f", k, v))
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// Rate formats bits per second the way rocelab prints rates (core/units):
// "0", "12.5 Mb/s", "400 Gb/s".
func Rate(bps float64) string {
	if bps == 0 {
		return "0"
	}
	return units.FormatRate(bps)
}

// Bytes formats a byte count the way rocelab prints sizes (core/units):
// "0", "4 KiB", "2.74 MB".
func Bytes(b float64) string {
	if b == 0 {
		return "0"
	}
	return units.FormatBytes(b)
}

// Seconds formats a fabric-time span: "0", "12µs", "3.4ms", "1.2s".
func Seconds(s float64) string {
	switch {
	case s == 0:
		return "0"
	case s < 1e-6:
		return fmt.Sprintf("%.3gns", s*1e9)
	case s < 1e-3:
		return fmt.Sprintf("%.3gµs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.3gms", s*1e3)
	}
	return fmt.Sprintf("%.3gs", s)
}
