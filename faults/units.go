package faults

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
)

// splitNum splits "10us" into 10 and "us".
func splitNum(s string) (float64, string, error) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == '-' || s[i] == '+' || s[i] == 'e' && i > 0 && i+1 < len(s) && (s[i+1] >= '0' && s[i+1] <= '9' || s[i+1] == '-')) {
		i++
	}
	if i == 0 {
		return 0, "", fmt.Errorf("%q does not start with a number", s)
	}
	f, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, "", fmt.Errorf("%q: bad number", s)
	}
	return f, s[i:], nil
}

// ParseProb reads a probability: "1%", "0.5%", or a fraction "0.01".
func ParseProb(s string) (float64, error) {
	f, unit, err := splitNum(s)
	if err == nil {
		switch unit {
		case "%":
			f /= 100
		case "":
		default:
			err = fmt.Errorf("%q: want a percentage like 1%% or a fraction like 0.01", s)
		}
	}
	if err == nil && !(f >= 0 && f <= 1) {
		err = fmt.Errorf("%q: probability out of [0%%, 100%%]", s)
	}
	return f, err
}

var durationUnits = map[string]clock.Duration{
	"ps": clock.Picosecond, "ns": clock.Nanosecond, "us": clock.Microsecond, "µs": clock.Microsecond,
	"ms": clock.Millisecond, "s": clock.Second,
}

// ParseDuration reads a fabric duration: a number and one of ps, ns, us
// (or µs), ms, s ("10us", "1.5ms", "0s"). A bare 0 is accepted.
func ParseDuration(s string) (clock.Duration, error) {
	f, unit, err := splitNum(s)
	if err != nil {
		return 0, err
	}
	u, ok := durationUnits[unit]
	if !ok {
		if unit == "" && f == 0 {
			return 0, nil
		}
		return 0, fmt.Errorf("%q: want a duration like 10us (units ps, ns, us, ms, s)", s)
	}
	if f < 0 {
		return 0, fmt.Errorf("%q: negative duration", s)
	}
	d := f * float64(u)
	if d > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q: duration too long", s)
	}
	return clock.Duration(math.Round(d)), nil
}

// ParseRate reads a line rate: a number and G, M or K, optionally followed
// by "bps" or "b/s" ("100G", "25Gbps", "1.5g"); "bps" alone is bits/s.
func ParseRate(s string) (clock.Rate, error) {
	f, unit, err := splitNum(s)
	if err != nil {
		return 0, err
	}
	u := strings.ToLower(unit)
	u = strings.TrimSuffix(strings.TrimSuffix(u, "bps"), "b/s")
	var mul clock.Rate
	switch u {
	case "g":
		mul = clock.Gbps
	case "m":
		mul = clock.Mbps
	case "k":
		mul = clock.Kbps
	case "":
		if unit == "" && f != 0 {
			return 0, fmt.Errorf("%q: want a rate with a unit like 100G or 400Mbps", s)
		}
		mul = clock.BitPerSecond
	default:
		return 0, fmt.Errorf("%q: want a rate like 100G, 25Gbps or 400M", s)
	}
	if f <= 0 {
		return 0, fmt.Errorf("%q: rate must be positive", s)
	}
	return clock.Rate(math.Round(f * float64(mul))), nil
}

var byteUnits = map[string]int64{
	"": 1, "b": 1, "kb": 1000, "kib": 1 << 10, "mb": 1000 * 1000, "mib": 1 << 20, "gb": 1000 * 1000 * 1000, "gib": 1 << 30,
}

// ParseBytes reads a byte count: a number with an optional unit B, KB,
// KiB, MB, MiB, GB, GiB (KB = 1000, KiB = 1024).
func ParseBytes(s string) (int64, error) {
	f, unit, err := splitNum(s)
	if err != nil {
		return 0, err
	}
	mul, ok := byteUnits[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf("%q: want bytes like 9000, 64KB or 1MiB", s)
	}
	if f < 0 {
		return 0, fmt.Errorf("%q: negative size", s)
	}
	return int64(math.Round(f * float64(mul))), nil
}

// parseInt reads an integer in [lo, hi].
func parseInt(s string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%q: want an integer in %d..%d", s, lo, hi)
	}
	return n, nil
}
