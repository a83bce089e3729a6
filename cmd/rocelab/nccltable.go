package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/endpoint/collective"
)

// writeNCCLTable prints results in nccl-tests' full layout: a root column,
// out-of-place and in-place column groups, and the footer with the out of
// bounds count and the average bus bandwidth. The lab runs every size out
// of place only (each rank has an input buffer and an output region), so the
// in-place columns say n/a rather than repeat the out-of-place figures,
// and the average is over the out-of-place runs, as the footer says.
func writeNCCLTable(w io.Writer, results []collective.Result) error {
	var b strings.Builder
	b.WriteString("#                                                              out-of-place                       in-place          \n")
	b.WriteString("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n")
	b.WriteString("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n")
	var sum float64
	var wrong int64
	checked := len(results) > 0
	for _, r := range results {
		wr := "N/A"
		if r.Checked {
			wr = strconv.FormatInt(r.Wrong, 10)
		}
		checked = checked && r.Checked
		wrong += r.Wrong
		sum += r.BusBW
		fmt.Fprintf(&b, "%12d  %12d  %8s  %6s  %6d  %7s  %6.2f  %6.2f  %5s  %7s  %6s  %6s  %5s\n",
			r.Size, r.Count, r.Type, r.RedOp, -1, collective.FormatTime(r.TimeUs), r.AlgBW, r.BusBW, wr, "n/a", "n/a", "n/a", "n/a")
	}
	b.WriteString("# in-place: not run (the lab runs each size out of place only)\n")
	switch {
	case !checked:
		b.WriteString("# Out of bounds values : N/A (data checks off)\n")
	case wrong == 0:
		b.WriteString("# Out of bounds values : 0 OK\n")
	default:
		fmt.Fprintf(&b, "# Out of bounds values : %d FAILED\n", wrong)
	}
	avg := 0.0
	if len(results) > 0 {
		avg = sum / float64(len(results))
	}
	fmt.Fprintf(&b, "# Avg bus bandwidth    : %g (out-of-place)\n#\n", roundTo(avg, 4))
	_, err := io.WriteString(w, b.String())
	return err
}

// roundTo rounds v to places decimals, so %g prints no float noise.
func roundTo(v float64, places int) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', places, 64), 64)
	return f
}
