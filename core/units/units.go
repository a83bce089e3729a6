// Package units is rocelab's one grammar for sizes, rates and durations:
// every file, flag, fault spec and expectation reads quantities through it,
// so a value rocelab prints is accepted back wherever that kind of value is
// asked for. docs/topology.md, "Units", is its user-facing description.
//
//	quantity = number [ spaces ] unit
//	number   = digits [ "." digits ] [ ( "e" | "E" ) [ "+" | "-" ] digits ]   (".5" and "5." too)
//	size     = number [ prefix ] [ "B" | "iB" ]      no unit: bytes; "b" is bits, refused
//	rate     = number [ prefix ] ( "bps" | "b/s" | "bit/s" ) | number prefix
//	duration = number ( "ps" | "ns" | "us" | "µs" | "ms" | "s" )
//	prefix   = "K" | "M" | "G" | "T"                 (any case)
//
// Sizes: K, M, G, T and KB, MB, GB, TB are powers of 1000; KiB, MiB, GiB,
// TiB powers of 1024. The one exception is ParseSizeBinary, for the sizes
// nccl-tests and perftest define as binary (collective sweeps, perf
// message sizes), where K/KB also mean 1024. A lowercase b is a bit, never a
// byte: "Mb", "kb" and "b" are refused as sizes.
// Rates are bits per second: 400G, 400Gbps, 400Gb/s and "400 Gb/s" are one
// rate; "GB/s" (bytes per second) is refused. A bare 0 needs no unit.
// Values come out whole — 1.5KB is 1500 bytes, 0.5B and 0.5ps are errors —
// and negative values are refused.
package units

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
)

// ParseSize parses a byte count: 1500, 64KB, 64KiB, "2.74 MB", 2.74M.
func ParseSize(s string) (int64, error) { return parseSize(s, 1000) }

// ParseSizeBinary parses a byte count the way nccl-tests' -b/-e and
// perftest's -s read it: K, KB and KiB are all 1024 (M, G, T likewise).
func ParseSizeBinary(s string) (int64, error) { return parseSize(s, 1024) }

// ParseRate parses a rate in bits per second: 400G, 400Gbps, 400Gb/s,
// "400 Gb/s", 1T, 100Mbps.
func ParseRate(s string) (clock.Rate, error) {
	num, u, err := split(s, "rate")
	if err != nil {
		return 0, err
	}
	mult, err := rateUnit(s, num, u)
	if err != nil {
		return 0, err
	}
	v, err := whole(s, num, mult, "rate", "bits per second")
	return clock.Rate(v), err
}

// ParseDuration parses a fabric duration: 1us, 1µs, 500ns, "1.5 ms", 0.
func ParseDuration(s string) (clock.Duration, error) {
	num, u, err := split(s, "duration")
	if err != nil {
		return 0, err
	}
	var mult int64
	switch u {
	case "ps":
		mult = 1
	case "ns":
		mult = int64(clock.Nanosecond)
	case "us", "µs", "μs": // micro sign U+00B5 and Greek mu U+03BC
		mult = int64(clock.Microsecond)
	case "ms":
		mult = int64(clock.Millisecond)
	case "s":
		mult = int64(clock.Second)
	case "":
		if !isZero(num) {
			return 0, fmt.Errorf("duration %q needs a unit (ps, ns, us, ms, s), e.g. 1us", s)
		}
		return 0, nil
	default:
		return 0, fmt.Errorf("bad duration %q: unknown unit %q (want ps, ns, us, ms, s)", s, u)
	}
	v, err := whole(s, num, mult, "duration", "picoseconds")
	return clock.Duration(v), err
}

// IsUnit reports whether u alone is a unit of a size, rate or duration, so
// that a word list split at spaces ("rate 400 Gb/s") can be put back
// together by JoinQuantities.
func IsUnit(u string) bool {
	if u == "" {
		return false
	}
	_, errS := parseSize("1"+u, 1000)
	_, errR := ParseRate("1" + u)
	_, errD := ParseDuration("1" + u)
	return errS == nil || errR == nil || errD == nil
}

// JoinQuantities rejoins a number word and the unit word after it, so that
// "400 Gb/s" typed among space-separated words reads as one value.
func JoinQuantities(words []string) []string {
	out := make([]string, 0, len(words))
	for i := 0; i < len(words); i++ {
		w := words[i]
		if i+1 < len(words) && isNumber(w) && IsUnit(words[i+1]) {
			w += words[i+1]
			i++
		}
		out = append(out, w)
	}
	return out
}

func parseSize(s string, k int64) (int64, error) {
	num, u, err := split(s, "size")
	if err != nil {
		return 0, err
	}
	mult, err := sizeUnit(s, u, k)
	if err != nil {
		return 0, err
	}
	return whole(s, num, mult, "size", "bytes")
}

// sizeUnit returns the bytes in unit u; k is 1000 for decimal prefixes
// or 1024 where a format defines them as binary.
func sizeUnit(s, u string, k int64) (int64, error) {
	bad := func(why string) (int64, error) {
		return 0, fmt.Errorf("bad size %q: %s (want B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, or K, M, G, T)", s, why)
	}
	if u == "" || u == "B" {
		return 1, nil
	}
	if strings.HasSuffix(u, "b") {
		return bad(fmt.Sprintf("%q is bits, write %sB for bytes", u, strings.TrimSuffix(u, "b")))
	}
	p := prefix(u[0])
	if p == 0 {
		return bad(fmt.Sprintf("unknown unit %q", u))
	}
	switch rest := u[1:]; {
	case rest == "":
		return pow(k, p), nil
	case rest == "iB":
		return pow(1024, p), nil
	case rest == "B":
		return pow(k, p), nil
	case isRateSuffix(rest):
		return bad(fmt.Sprintf("%q is a rate, not a size", u))
	}
	return bad(fmt.Sprintf("unknown unit %q", u))
}

// rateUnit returns the bits per second in unit u.
func rateUnit(s, num, u string) (int64, error) {
	bad := func(why string) (int64, error) {
		return 0, fmt.Errorf("bad rate %q: %s (want e.g. 400G, 400Gbps, 400Gb/s)", s, why)
	}
	if u == "" {
		if isZero(num) {
			return 1, nil
		}
		return 0, fmt.Errorf("rate %q needs a unit, e.g. 400G, 400Gb/s or 100Mbps", s)
	}
	if isRateSuffix(u) {
		return 1, nil
	}
	p := prefix(u[0])
	if p == 0 {
		return bad(fmt.Sprintf("unknown unit %q", u))
	}
	rest := u[1:]
	switch {
	case rest == "" || isRateSuffix(rest):
		return pow(1000, p), nil
	case rest == "B/s" || rest == "Bps" || rest == "B" || strings.EqualFold(rest, "iB"):
		return bad(fmt.Sprintf("%q is bytes; a rate is in bits per second", u))
	}
	return bad(fmt.Sprintf("unknown unit %q", u))
}

func isRateSuffix(u string) bool { return u == "bps" || u == "b/s" || u == "bit/s" }

// prefix returns the power of K, M, G, T (any case), 0 for none.
func prefix(c byte) int {
	switch c {
	case 'K', 'k':
		return 1
	case 'M', 'm':
		return 2
	case 'G', 'g':
		return 3
	case 'T', 't':
		return 4
	}
	return 0
}

func pow(k int64, p int) int64 {
	n := int64(1)
	for range p {
		n *= k
	}
	return n
}

// split cuts "2.74 MB" into "2.74" and "MB".
func split(s, what string) (num, u string, err error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return "", "", fmt.Errorf("empty %s", what)
	}
	if t[0] == '-' {
		return "", "", fmt.Errorf("negative %s %q", what, s)
	}
	i := numberEnd(t)
	if i == 0 {
		return "", "", fmt.Errorf("bad %s %q: want a number and a unit", what, s)
	}
	return t[:i], strings.TrimSpace(t[i:]), nil
}

// numberEnd returns the length of the number at the start of t, 0 if none.
func numberEnd(t string) int {
	i, digits := 0, 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i, digits = i+1, digits+1
	}
	if i < len(t) && t[i] == '.' {
		i++
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return 0
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		j := i + 1
		if j < len(t) && (t[j] == '+' || t[j] == '-') {
			j++
		}
		if j < len(t) && t[j] >= '0' && t[j] <= '9' {
			for j < len(t) && t[j] >= '0' && t[j] <= '9' {
				j++
			}
			i = j
		}
	}
	return i
}

func isNumber(w string) bool { return w != "" && numberEnd(w) == len(w) }

func isZero(num string) bool {
	r, ok := new(big.Rat).SetString(num)
	return ok && r.Sign() == 0
}

// whole returns num × mult, which must be a whole number that fits int64.
func whole(s, num string, mult int64, what, base string) (int64, error) {
	if i := strings.IndexAny(num, "eE"); i >= 0 {
		if e, err := strconv.Atoi(num[i+1:]); err != nil || e > 30 || e < -30 {
			return 0, fmt.Errorf("bad %s %q: exponent out of range", what, s)
		}
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Errorf("bad %s %q: bad number %q", what, s, num)
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	if !r.IsInt() {
		return 0, fmt.Errorf("bad %s %q: not a whole number of %s", what, s, base)
	}
	if !r.Num().IsInt64() {
		return 0, fmt.Errorf("%s %q is too large", what, s)
	}
	return r.Num().Int64(), nil
}
