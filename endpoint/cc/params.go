package cc

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
)

// Unlimited is the Allowance of a rate-only scheme: no window, no credit.
const Unlimited int64 = math.MaxInt64

// Params reads typed settings out of Env.Params for one algorithm. Each
// getter consumes one name and returns its default when the name is absent;
// Err reports the first malformed or out-of-range value and every name no
// getter asked for, so a typo in a scenario is an error at construction.
type Params struct {
	alg  string
	raw  map[string]string
	used map[string]bool
	errs []error
}

// NewParams starts reading raw on behalf of the algorithm alg.
func NewParams(alg string, raw map[string]string) *Params {
	return &Params{alg: alg, raw: raw, used: make(map[string]bool, len(raw))}
}

func (p *Params) lookup(name string) (string, bool) {
	p.used[name] = true
	v, ok := p.raw[name]
	return strings.TrimSpace(v), ok
}

func (p *Params) fail(name, v, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%s: parameter %s=%q: %s", p.alg, name, v, fmt.Sprintf(format, args...)))
}

// Float reads a number in [lo, hi]; a fraction like "1/256" is accepted.
func (p *Params) Float(name string, def, lo, hi float64) float64 {
	v, ok := p.lookup(name)
	if !ok {
		return def
	}
	f, err := parseFloat(v)
	if err != nil {
		p.fail(name, v, "%v", err)
		return def
	}
	if f < lo || f > hi || math.IsNaN(f) {
		p.fail(name, v, "must be in [%g, %g]", lo, hi)
		return def
	}
	return f
}

// Int reads an integer in [lo, hi].
func (p *Params) Int(name string, def, lo, hi int64) int64 {
	v, ok := p.lookup(name)
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		p.fail(name, v, "not an integer")
		return def
	}
	if n < lo || n > hi {
		p.fail(name, v, "must be in [%d, %d]", lo, hi)
		return def
	}
	return n
}

// Bytes reads a byte count in [lo, hi]: "4096", "64KiB", "10MB" (kB/KB, MB,
// GB are decimal, KiB/MiB/GiB binary).
func (p *Params) Bytes(name string, def, lo, hi int64) int64 {
	v, ok := p.lookup(name)
	if !ok {
		return def
	}
	n, err := ParseBytes(v)
	if err != nil {
		p.fail(name, v, "%v", err)
		return def
	}
	if n < lo || n > hi {
		p.fail(name, v, "must be in [%d, %d] bytes", lo, hi)
		return def
	}
	return n
}

// Duration reads a positive span with a unit: "55us", "1.5ms", "300ns".
func (p *Params) Duration(name string, def clock.Duration) clock.Duration {
	v, ok := p.lookup(name)
	if !ok {
		return def
	}
	d, err := ParseDuration(v)
	if err != nil {
		p.fail(name, v, "%v", err)
		return def
	}
	if d <= 0 {
		p.fail(name, v, "must be positive")
		return def
	}
	return d
}

// Rate reads a rate in [lo, hi]: "100G", "5Mbps", "50Mb/s", "2.5G".
func (p *Params) Rate(name string, def, lo, hi clock.Rate) clock.Rate {
	v, ok := p.lookup(name)
	if !ok {
		return def
	}
	r, err := ParseRate(v)
	if err != nil {
		p.fail(name, v, "%v", err)
		return def
	}
	if r < lo || r > hi {
		p.fail(name, v, "must be in [%v, %v]", lo, hi)
		return def
	}
	return r
}

// Enum reads one of the allowed words.
func (p *Params) Enum(name, def string, allowed ...string) string {
	v, ok := p.lookup(name)
	if !ok {
		return def
	}
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	p.fail(name, v, "must be one of %v", allowed)
	return def
}

// Err returns the accumulated errors, including one for every name in the
// map that no getter read.
func (p *Params) Err() error {
	var unknown []string
	for k := range p.raw {
		if !p.used[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	errs := p.errs
	if len(unknown) > 0 {
		known := make([]string, 0, len(p.used))
		for k := range p.used {
			known = append(known, k)
		}
		sort.Strings(known)
		errs = append(errs, fmt.Errorf("%s: unknown parameter(s) %v (known: %v)", p.alg, unknown, known))
	}
	return errors.Join(errs...)
}

func parseFloat(s string) (float64, error) {
	if num, den, ok := strings.Cut(s, "/"); ok {
		a, err1 := strconv.ParseFloat(strings.TrimSpace(num), 64)
		b, err2 := strconv.ParseFloat(strings.TrimSpace(den), 64)
		if err1 != nil || err2 != nil || b == 0 {
			return 0, errors.New("not a number or fraction")
		}
		return a / b, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, errors.New("not a number")
	}
	return f, nil
}

// splitUnit splits "12.5Mbps" into 12.5 and "Mbps".
func splitUnit(s string) (float64, string, error) {
	i := len(s)
	for i > 0 && !(s[i-1] >= '0' && s[i-1] <= '9' || s[i-1] == '.') {
		i--
	}
	f, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || f < 0 || math.IsInf(f, 0) {
		return 0, "", fmt.Errorf("bad number in %q", s)
	}
	return f, strings.TrimSpace(s[i:]), nil
}

// ParseBytes parses "4096", "64KiB", "10MB".
func ParseBytes(s string) (int64, error) {
	f, unit, err := splitUnit(s)
	if err != nil {
		return 0, err
	}
	mult := map[string]float64{"": 1, "B": 1, "KB": 1e3, "kB": 1e3, "MB": 1e6, "GB": 1e9,
		"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("unknown byte unit %q (want B, kB, MB, GB, KiB, MiB, GiB)", unit)
	}
	return int64(math.Round(f * mult)), nil
}

// ParseDuration parses "55us", "55µs", "1.5ms", "300ns", "20ps", "1s".
func ParseDuration(s string) (clock.Duration, error) {
	f, unit, err := splitUnit(s)
	if err != nil {
		return 0, err
	}
	units := map[string]clock.Duration{"ps": clock.Picosecond, "ns": clock.Nanosecond,
		"us": clock.Microsecond, "µs": clock.Microsecond, "ms": clock.Millisecond, "s": clock.Second}
	u, ok := units[unit]
	if !ok {
		return 0, fmt.Errorf("unknown time unit %q (want ps, ns, us, ms, s)", unit)
	}
	return clock.Duration(math.Round(f * float64(u))), nil
}

// ParseRate parses "100G", "100Gbps", "5Mb/s", "800K", "1000" (bits/s).
func ParseRate(s string) (clock.Rate, error) {
	f, unit, err := splitUnit(s)
	if err != nil {
		return 0, err
	}
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "bps"), "b/s")
	mult := map[string]float64{"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("unknown rate unit in %q (want e.g. 100G, 5Mbps, 50Mb/s)", s)
	}
	return clock.Rate(math.Round(f * mult)), nil
}
