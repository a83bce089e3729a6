package faults

import (
	"fmt"
	"math"
	"strconv"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/units"
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

// Durations, rates and sizes are read with core/units, the grammar
// topologies, expectations and CLI flags share (docs/faults.md, "Units").

// ParseDuration reads a fabric duration: "10us", "10µs", "1.5ms", "0s", 0.
func ParseDuration(s string) (clock.Duration, error) { return units.ParseDuration(s) }

// ParseRate reads a rate in bits per second: "100G", "25Gbps", "400Gb/s",
// "1T". A fault's rate is positive.
func ParseRate(s string) (clock.Rate, error) {
	r, err := units.ParseRate(s)
	if err == nil && r <= 0 {
		err = fmt.Errorf("%q: rate must be positive", s)
	}
	return r, err
}

// ParseBytes reads a byte count: 9000, 64KB, 64KiB, "2.74 MB"
// (KB = 1000, KiB = 1024).
func ParseBytes(s string) (int64, error) { return units.ParseSize(s) }

// parseInt reads an integer in [lo, hi].
func parseInt(s string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%q: want an integer in %d..%d", s, lo, hi)
	}
	return n, nil
}
