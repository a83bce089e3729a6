package report

import (
	"encoding/csv"
	"encoding/json"
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

type jsonPoint struct {
	T   float64 `json:"time_s"`
	V   float64 `json:"value"`
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

type jsonSeries struct {
	Name    string            `json:"series"`
	Labels  map[string]string `json:"labels"`
	Kind    string            `json:"kind"`
	WidthS  float64           `json:"point_width_s"`
	Points  []jsonPoint       `json:"points"`
	Count   int64             `json:"readings"`
	MaxSeen float64           `json:"max"`
	Last    float64           `json:"last"`
}

type jsonSample struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	Value  float64           `json:"value"`
}

func labelMap(l []telemetry.Label) map[string]string {
	m := map[string]string{}
	for _, x := range l {
		m[x.Name] = x.Value
	}
	return m
}

// writeMetrics writes metrics.csv and metrics.json.
func writeMetrics(dir string, d Data) error {
	f, err := os.Create(filepath.Join(dir, "metrics.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"time_s", "series", "labels", "value"})
	for _, s := range d.Series {
		lt := labelText(s.Labels)
		for _, p := range s.Points {
			_ = w.Write([]string{strconv.FormatFloat(p.T.Seconds(), 'g', 9, 64), s.Name, lt, strconv.FormatFloat(p.V, 'g', -1, 64)})
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	doc := struct {
		Scenario string       `json:"scenario"`
		Seed     uint64       `json:"seed"`
		Series   []jsonSeries `json:"series"`
		Final    []jsonSample `json:"final"`
		Jobs     []Job        `json:"jobs"`
	}{Scenario: d.Scenario.Name, Seed: d.Seed, Jobs: d.Jobs}
	for _, s := range d.Series {
		js := jsonSeries{Name: s.Name, Labels: labelMap(s.Labels), Kind: s.Kind.String(), WidthS: s.Width.Seconds(),
			Count: s.Totals.Count, MaxSeen: s.Totals.Max, Last: s.Totals.Last}
		for _, p := range s.Points {
			js.Points = append(js.Points, jsonPoint{T: p.T.Seconds(), V: p.V, Min: p.Min, Max: p.Max})
		}
		doc.Series = append(doc.Series, js)
	}
	for _, s := range d.Final {
		doc.Final = append(doc.Final, jsonSample{Name: s.Name, Labels: labelMap(s.Labels), Value: s.Value})
	}
	data, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "metrics.json"), append(data, '\n'), 0o644)
}
