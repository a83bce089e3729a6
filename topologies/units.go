package topologies

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/units"
)

// Sizes, rates and durations are read with core/units, the one grammar
// every rocelab file, flag and spec uses (docs/topology.md, "Units"):
// 32MB, 4KiB, 1500 (bytes); 400G, 400Gbps, 400Gb/s, "400 Gb/s", 1T;
// 1us, 500ns. Sizes are decimal (KB = 1000) unless written KiB.

// ParseSize parses a byte count: 32MB, 32MiB, 4KiB, 1500 (plain = bytes).
func ParseSize(s string) (int64, error) { return units.ParseSize(s) }

// ParseRate parses a line rate: 400G, 400Gbps, 400Gb/s, 100Mbps, 1T.
func ParseRate(s string) (clock.Rate, error) { return units.ParseRate(s) }

// ParseDuration parses a fabric duration: 1us, 500ns, 1.5us, 100ms.
func ParseDuration(s string) (clock.Duration, error) { return units.ParseDuration(s) }

// ParseFraction parses 0.125, 1/8 or 12.5%.
func ParseFraction(s string) (float64, error) {
	s = strings.TrimSpace(s)
	bad := func() (float64, error) {
		return 0, fmt.Errorf("bad fraction %q: want a number, a ratio like 1/8, or a percentage like 20%%", s)
	}
	var v float64
	switch {
	case strings.HasSuffix(s, "%"):
		f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
		if err != nil {
			return bad()
		}
		v = f / 100
	case strings.Contains(s, "/"):
		a, b, _ := strings.Cut(s, "/")
		x, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
		y, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
		if err1 != nil || err2 != nil {
			return bad()
		}
		if y == 0 {
			return 0, fmt.Errorf("bad fraction %q: division by zero", s)
		}
		v = x / y
	default:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return bad()
		}
		v = f
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return bad()
	}
	return v, nil
}

// FormatSize formats n bytes the way rocelab prints sizes: 32 MB, 4 KiB, 1500 B.
func FormatSize(n int64) string { return units.FormatSize(n) }
