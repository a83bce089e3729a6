package report

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/core/telemetry"
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
	head := struct {
		Scenario string `json:"scenario"`
		Seed     uint64 `json:"seed"`
		Detail   string `json:"detail"`
		Note     string `json:"note,omitempty"`
	}{Scenario: d.Scenario.Name, Seed: d.Seed, Detail: "full"}
	if det.summarized {
		head.Detail, head.Note = "summarized", det.note(d)
	}
	h, err := json.Marshal(head)
	if err != nil {
		return err
	}
	// The document is framed here and each record is marshalled on its
	// own line, so memory holds one record at a time.
	w.WriteString("{\n ")
	w.Write(h[1 : len(h)-1])
	rw := &recordWriter{w: w}
	rw.open("series")
	var points []pointRecord
	for i, s := range d.Series {
		t := s.Totals
		r := seriesRecord{Series: s.Name, Labels: labelMap(s.Labels), Kind: s.Kind.String(), Width: jsonFloat(s.Width.Seconds()),
			Points: points[:0], Readings: t.Count,
			Min: jsonFloat(t.Min), Mean: jsonFloat(t.Mean()), Max: jsonFloat(t.Max), Last: jsonFloat(t.Last)}
		if det.writesPoints(i) {
			for _, p := range s.Points {
				r.Points = append(r.Points, pointRecord{jsonFloat(p.T.Seconds()), jsonFloat(p.V), jsonFloat(p.Min), jsonFloat(p.Max)})
			}
		} else {
			r.Omitted = true
		}
		points = r.Points
		rw.record(r)
	}
	if det.summarized {
		rw.open("final_totals")
		for _, t := range det.totals {
			rw.record(totalRecord{t.Name, t.Samples, t.Nonzero, jsonFloat(t.Sum), jsonFloat(t.Min), jsonFloat(t.Max)})
		}
	}
	rw.open("final")
	sample := func(s telemetry.Sample) {
		rw.record(sampleRecord{Name: s.Name, Labels: labelMap(s.Labels), Value: jsonFloat(s.Value)})
	}
	if det.summarized {
		for _, i := range det.final {
			sample(d.Final[i])
		}
	} else {
		for _, s := range d.Final {
			sample(s)
		}
	}
	rw.open("jobs")
	for _, j := range d.Jobs {
		rw.record(j)
	}
	rw.close()
	w.WriteString("\n}\n")
	return rw.err
}

// recordWriter writes the arrays of metrics.json a marshalled record per
// line; the first error sticks.
type recordWriter struct {
	w      *bufio.Writer
	n      int // records in the open array
	inList bool
	err    error
}

func (rw *recordWriter) open(key string) {
	rw.close()
	fmt.Fprintf(rw.w, ",\n %q: [", key)
	rw.inList, rw.n = true, 0
}

func (rw *recordWriter) close() {
	if rw.inList {
		rw.w.WriteString("\n ]")
		rw.inList = false
	}
}

func (rw *recordWriter) record(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		if rw.err == nil {
			rw.err = err
		}
		return
	}
	if rw.n > 0 {
		rw.w.WriteByte(',')
	}
	rw.n++
	rw.w.WriteString("\n  ")
	rw.w.Write(b) // a write error stays in w and comes back at Flush
}

// The records of metrics.json.
type (
	seriesRecord struct {
		Series   string            `json:"series"`
		Labels   map[string]string `json:"labels"`
		Kind     string            `json:"kind"`
		Width    jsonFloat         `json:"point_width_s"`
		Points   []pointRecord     `json:"points"`
		Omitted  bool              `json:"points_omitted,omitempty"`
		Readings int64             `json:"readings"`
		Min      jsonFloat         `json:"min"`
		Mean     jsonFloat         `json:"mean"`
		Max      jsonFloat         `json:"max"`
		Last     jsonFloat         `json:"last"`
	}
	pointRecord struct {
		T   jsonFloat `json:"time_s"`
		V   jsonFloat `json:"value"`
		Min jsonFloat `json:"min"`
		Max jsonFloat `json:"max"`
	}
	totalRecord struct {
		Name    string    `json:"name"`
		Samples int       `json:"samples"`
		Nonzero int       `json:"nonzero"`
		Sum     jsonFloat `json:"sum"`
		Min     jsonFloat `json:"min"`
		Max     jsonFloat `json:"max"`
	}
	sampleRecord struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels,omitempty"`
		Value  jsonFloat         `json:"value"`
	}
)

// jsonFloat is a float64 that JSON can always carry: NaN and the
// infinities are written as null.
type jsonFloat float64

// MarshalJSON writes f as encoding/json writes a float64, or null.
func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

// labelMap returns labels as a map (a name given twice keeps its last
// value); encoding/json writes it with sorted keys.
func labelMap(labels []telemetry.Label) map[string]string {
	m := make(map[string]string, len(labels))
	for _, l := range labels {
		m[l.Name] = l.Value
	}
	return m
}
