package report

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rocelab/rocelab/lab/telemetry"
)

// The metrics files are encoded by hand, a record at a time, with these
// appenders: encoding/json on millions of small values costs more time
// and memory than the run that made them.

// appendFloat appends f as encoding/json writes a float64; NaN and the
// infinities, which JSON cannot carry, as null.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 → 1e-7, as encoding/json.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	plain := utf8.ValidString(s)
	for i := 0; plain && i < len(s); i++ {
		c := s[i]
		plain = c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	if plain {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// appendKey appends "key": (key is a constant of this package).
func appendKey(b []byte, key string) []byte {
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// appendLabels appends labels as a JSON object with sorted keys; a name
// given twice keeps its last value, as a map would.
func appendLabels(b []byte, labels []telemetry.Label) []byte {
	if !slices.IsSortedFunc(labels, compareNames) {
		labels = slices.Clone(labels)
		slices.SortStableFunc(labels, compareNames)
	}
	b = append(b, '{')
	first := true
	for i, l := range labels {
		if i+1 < len(labels) && labels[i+1].Name == l.Name {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, l.Name)
		b = append(b, ':')
		b = appendString(b, l.Value)
	}
	return append(b, '}')
}

func compareNames(x, y telemetry.Label) int { return strings.Compare(x.Name, y.Name) }
