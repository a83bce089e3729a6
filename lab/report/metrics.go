package report

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/lab/telemetry"
)

func labelText(l []telemetry.Label) string {
	parts := make([]string, len(l))
	for i, x := range l {
		parts[i] = x.Name + "=" + x.Value
	}
	return strings.Join(parts, ",")
}

// writeMetrics writes metrics.csv and metrics.json, holding what det
// says.
func writeMetrics(dir string, d Data, det *detail) error {
	if err := writeFile(filepath.Join(dir, "metrics.csv"), func(w *bufio.Writer) error { return writeCSV(w, d, det) }); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "metrics.json"), func(w *bufio.Writer) error { return writeJSON(w, d, det) })
}

// writeFile creates path and hands fill a buffered writer on it.
func writeFile(path string, fill func(w *bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 256<<10)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// writeCSV writes a row per point: time_s, series, labels, value.
func writeCSV(w *bufio.Writer, d Data, det *detail) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"time_s", "series", "labels", "value"}); err != nil {
		return err
	}
	var rec [4]string
	for i, s := range d.Series {
		if !det.writesPoints(i) {
			continue
		}
		rec[1], rec[2] = s.Name, labelText(s.Labels)
		for _, p := range s.Points {
			rec[0] = strconv.FormatFloat(p.T.Seconds(), 'g', 9, 64)
			rec[3] = strconv.FormatFloat(p.V, 'g', -1, 64)
			if err := cw.Write(rec[:]); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeJSON writes metrics.json a record per line:
//
//	{
//	 "scenario": …, "seed": …, "detail": "full" or "summarized", "note": …,
//	 "series": [ {"series", "labels", "kind", "point_width_s", "points":
//	             [{"time_s", "value", "min", "max"}…], "readings", "min",
//	             "mean", "max", "last"}, … ],
//	 "final_totals": [ {"name", "samples", "nonzero", "sum", "min", "max"}, … ],
//	 "final": [ {"name", "labels", "value"}, … ],
//	 "jobs": [ Job, … ]
//	}
//
// final_totals and note are there only when the report is summarized; a
// series whose points were left out has "points": [] and
// "points_omitted": true.
func writeJSON(w *bufio.Writer, d Data, det *detail) error {
	var b []byte
	flush := func() {
		w.Write(b) // a write error stays in w and comes back at Flush
		b = b[:0]
	}
	b = append(b, "{\n "...)
	b = appendKey(b, "scenario")
	b = appendString(b, d.Scenario.Name)
	b = append(b, ",\n "...)
	b = appendKey(b, "seed")
	b = strconv.AppendUint(b, d.Seed, 10)
	b = append(b, ",\n "...)
	b = appendKey(b, "detail")
	if det.summarized {
		b = appendString(b, "summarized")
		b = append(b, ",\n "...)
		b = appendKey(b, "note")
		b = appendString(b, det.note(d))
	} else {
		b = appendString(b, "full")
	}
	b = append(b, ",\n "...)
	b = appendKey(b, "series")
	b = append(b, '[')
	for i, s := range d.Series {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n  {"...)
		b = appendKey(b, "series")
		b = appendString(b, s.Name)
		b = append(b, ',')
		b = appendKey(b, "labels")
		b = appendLabels(b, s.Labels)
		b = append(b, ',')
		b = appendKey(b, "kind")
		b = appendString(b, s.Kind.String())
		b = append(b, ',')
		b = appendKey(b, "point_width_s")
		b = appendFloat(b, s.Width.Seconds())
		b = append(b, ',')
		b = appendKey(b, "points")
		b = append(b, '[')
		if det.writesPoints(i) {
			for j, p := range s.Points {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, '{')
				b = appendKey(b, "time_s")
				b = appendFloat(b, p.T.Seconds())
				b = append(b, ',')
				b = appendKey(b, "value")
				b = appendFloat(b, p.V)
				b = append(b, ',')
				b = appendKey(b, "min")
				b = appendFloat(b, p.Min)
				b = append(b, ',')
				b = appendKey(b, "max")
				b = appendFloat(b, p.Max)
				b = append(b, '}')
			}
			b = append(b, ']')
		} else {
			b = append(b, "],"...)
			b = appendKey(b, "points_omitted")
			b = append(b, "true"...)
		}
		t := s.Totals
		b = append(b, ',')
		b = appendKey(b, "readings")
		b = strconv.AppendInt(b, t.Count, 10)
		b = append(b, ',')
		b = appendKey(b, "min")
		b = appendFloat(b, t.Min)
		b = append(b, ',')
		b = appendKey(b, "mean")
		b = appendFloat(b, t.Mean())
		b = append(b, ',')
		b = appendKey(b, "max")
		b = appendFloat(b, t.Max)
		b = append(b, ',')
		b = appendKey(b, "last")
		b = appendFloat(b, t.Last)
		b = append(b, '}')
		flush()
	}
	b = append(b, "\n ],\n "...)
	if det.summarized {
		b = appendKey(b, "final_totals")
		b = append(b, '[')
		for i, t := range det.totals {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n  {"...)
			b = appendKey(b, "name")
			b = appendString(b, t.Name)
			b = append(b, ',')
			b = appendKey(b, "samples")
			b = strconv.AppendInt(b, int64(t.Samples), 10)
			b = append(b, ',')
			b = appendKey(b, "nonzero")
			b = strconv.AppendInt(b, int64(t.Nonzero), 10)
			b = append(b, ',')
			b = appendKey(b, "sum")
			b = appendFloat(b, t.Sum)
			b = append(b, ',')
			b = appendKey(b, "min")
			b = appendFloat(b, t.Min)
			b = append(b, ',')
			b = appendKey(b, "max")
			b = appendFloat(b, t.Max)
			b = append(b, '}')
			flush()
		}
		b = append(b, "\n ],\n "...)
	}
	b = appendKey(b, "final")
	b = append(b, '[')
	sample := func(n int, s telemetry.Sample) {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n  {"...)
		b = appendKey(b, "name")
		b = appendString(b, s.Name)
		if len(s.Labels) > 0 {
			b = append(b, ',')
			b = appendKey(b, "labels")
			b = appendLabels(b, s.Labels)
		}
		b = append(b, ',')
		b = appendKey(b, "value")
		b = appendFloat(b, s.Value)
		b = append(b, '}')
		flush()
	}
	if det.summarized {
		for n, i := range det.final {
			sample(n, d.Final[i])
		}
	} else {
		for n, s := range d.Final {
			sample(n, s)
		}
	}
	b = append(b, "\n ],\n "...)
	b = appendKey(b, "jobs")
	b = append(b, '[')
	for i, j := range d.Jobs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n  "...)
		data, err := json.Marshal(j)
		if err != nil {
			return fmt.Errorf("job %s: %w", j.Name, err)
		}
		b = append(b, data...)
		flush()
	}
	b = append(b, "\n ]\n}\n"...)
	flush()
	return nil
}
