package topologies

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
)

// The units grammar (docs/topology.md, "Units"):
//
//	quantity = number [ " " ] unit
//	number   = digits [ "." digits ]
//	size     = number [ "B" | "KB" | "kB" | "MB" | "GB" | "TB" | "KiB" | "MiB" | "GiB" | "TiB" ]
//	           (no unit = bytes; KB/MB/GB/TB are powers of 1000, KiB/MiB/GiB/TiB of 1024)
//	rate     = number ( "bps" | "K" | "Kbps" | "M" | "Mbps" | "G" | "Gbps" | "T" | "Tbps" )
//	           (bits per second; k and kbps are accepted for K and Kbps)
//	duration = number ( "ps" | "ns" | "us" | "µs" | "ms" | "s" )   ("0" alone is allowed)
//	fraction = number | number "/" number | number "%"
//
// Values must come out whole: 1.5KB is 1500 bytes, 0.5B is an error, and
// durations are whole picoseconds.

var sizeUnits = []unit{
	{"B", 1}, {"KB", 1e3}, {"kB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
}

var rateUnits = []unit{
	{"bps", 1},
	{"K", 1e3}, {"k", 1e3}, {"Kbps", 1e3}, {"kbps", 1e3},
	{"M", 1e6}, {"Mbps", 1e6}, {"G", 1e9}, {"Gbps", 1e9}, {"T", 1e12}, {"Tbps", 1e12},
}

var durationUnits = []unit{
	{"ps", 1}, {"ns", 1e3}, {"us", 1e6}, {"µs", 1e6}, {"ms", 1e9}, {"s", 1e12},
}

type unit struct {
	name string
	mult int64
}

func unitNames(us []unit) string {
	var names []string
	for _, u := range us {
		if u.name == "k" || u.name == "kbps" || u.name == "kB" || u.name == "µs" {
			continue // accepted aliases, not advertised
		}
		names = append(names, u.name)
	}
	return strings.Join(names, ", ")
}

// splitQuantity splits "400Gbps" into "400" and "Gbps".
func splitQuantity(s string) (num, u string) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	return s[:i], strings.TrimPrefix(s[i:], " ")
}

// parseQuantity parses number+unit into an exact integer count of the base
// unit. what names the kind of value in errors ("size", "rate").
func parseQuantity(s, what string, units []unit, plainOK bool, example string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty %s, want e.g. %s", what, example)
	}
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("negative %s %q", what, s)
	}
	num, u := splitQuantity(s)
	if num == "" || strings.Count(num, ".") > 1 || strings.HasPrefix(num, ".") || strings.HasSuffix(num, ".") {
		return 0, fmt.Errorf("bad %s %q: want a number and a unit, e.g. %s", what, s, example)
	}
	mult := int64(0)
	switch {
	case u == "" && plainOK:
		mult = 1
	case u == "" && num == "0":
		return 0, nil
	case u == "":
		return 0, fmt.Errorf("%s %q needs a unit (%s), e.g. %s", what, s, unitNames(units), example)
	default:
		for _, x := range units {
			if x.name == u {
				mult = x.mult
			}
		}
		if mult == 0 {
			return 0, fmt.Errorf("bad %s %q: unknown unit %q (want %s)", what, s, u, unitNames(units))
		}
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Errorf("bad %s %q: bad number %q", what, s, num)
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	if !r.IsInt() {
		return 0, fmt.Errorf("bad %s %q: not a whole number of %s", what, s, baseName(what))
	}
	if !r.Num().IsInt64() {
		return 0, fmt.Errorf("%s %q is too large", what, s)
	}
	return r.Num().Int64(), nil
}

func baseName(what string) string {
	switch what {
	case "size":
		return "bytes"
	case "rate":
		return "bits per second"
	case "duration":
		return "picoseconds"
	}
	return "units"
}

// ParseSize parses a byte count: 32MB, 32MiB, 4KiB, 1500 (plain = bytes).
func ParseSize(s string) (int64, error) {
	return parseQuantity(s, "size", sizeUnits, true, "32MB or 4KiB")
}

// ParseRate parses a line rate: 400G, 400Gbps, 100Mbps, 25G.
func ParseRate(s string) (clock.Rate, error) {
	v, err := parseQuantity(s, "rate", rateUnits, false, "400G or 100Gbps")
	return clock.Rate(v), err
}

// ParseDuration parses a fabric duration: 1us, 500ns, 1.5us, 100ms.
func ParseDuration(s string) (clock.Duration, error) {
	v, err := parseQuantity(s, "duration", durationUnits, false, "1us or 500ns")
	return clock.Duration(v), err
}

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

// FormatSize formats n bytes the way a person would write it: 32MB, 4KiB, 1500B.
func FormatSize(n int64) string {
	if n == 0 {
		return "0B"
	}
	for _, u := range []unit{{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}} {
		if n%u.mult == 0 {
			return fmt.Sprintf("%d%s", n/u.mult, u.name)
		}
	}
	for _, u := range []unit{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n%u.mult == 0 {
			return fmt.Sprintf("%d%s", n/u.mult, u.name)
		}
	}
	if n >= 1e6 {
		return strconv.FormatFloat(float64(n)/1e6, 'f', -1, 64) + "MB"
	}
	return fmt.Sprintf("%dB", n)
}

// approxSize formats n for messages: exact when short, else to 0.1 of a unit.
func approxSize(n int64) string {
	s := FormatSize(n)
	if !strings.Contains(s, ".") && len(s) <= 8 {
		return s
	}
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fGB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fMB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fKB", float64(n)/1e3)
	}
	return s
}
