package cc

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/units"
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
	return read(p, name, def, parseFloat, func(f float64) bool { return f >= lo && f <= hi }, fmt.Sprintf("must be in [%g, %g]", lo, hi))
}

// Int reads an integer in [lo, hi].
func (p *Params) Int(name string, def, lo, hi int64) int64 {
	parse := func(v string) (int64, error) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, errors.New("not an integer")
		}
		return n, nil
	}
	return read(p, name, def, parse, func(n int64) bool { return n >= lo && n <= hi }, fmt.Sprintf("must be in [%d, %d]", lo, hi))
}

// Bytes reads a byte count in [lo, hi]: "4096", "64KiB", "10MB" (kB/KB, MB,
// GB are decimal, KiB/MiB/GiB binary).
func (p *Params) Bytes(name string, def, lo, hi int64) int64 {
	return read(p, name, def, ParseBytes, func(n int64) bool { return n >= lo && n <= hi }, fmt.Sprintf("must be in [%d, %d] bytes", lo, hi))
}

// Duration reads a positive span with a unit: "55us", "1.5ms", "300ns".
func (p *Params) Duration(name string, def clock.Duration) clock.Duration {
	return read(p, name, def, ParseDuration, func(d clock.Duration) bool { return d > 0 }, "must be positive")
}

// Rate reads a rate in [lo, hi]: "100G", "5Mbps", "50Mb/s", "2.5G".
func (p *Params) Rate(name string, def, lo, hi clock.Rate) clock.Rate {
	return read(p, name, def, ParseRate, func(r clock.Rate) bool { return r >= lo && r <= hi }, fmt.Sprintf("must be in [%v, %v]", lo, hi))
}

// read is every getter: the parameter called name parsed by parse, or def
// when it is absent; a value parse refuses, or that ok refuses (saying
// want), is recorded as an error and def returned.
func read[T any](p *Params, name string, def T, parse func(string) (T, error), ok func(T) bool, want string) T {
	v, given := p.lookup(name)
	if !given {
		return def
	}
	x, err := parse(v)
	if err != nil {
		p.fail(name, v, "%v", err)
		return def
	}
	if !ok(x) {
		p.fail(name, v, "%s", want)
		return def
	}
	return x
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

// Sizes, durations and rates are read with core/units, the grammar
// topologies, faults and expectations share.

// ParseBytes parses "4096", "64KiB", "10MB", "2.74 MB".
func ParseBytes(s string) (int64, error) { return units.ParseSize(s) }

// ParseDuration parses "55us", "55µs", "1.5ms", "300ns", "20ps", "1s".
func ParseDuration(s string) (clock.Duration, error) { return units.ParseDuration(s) }

// ParseRate parses "100G", "100Gbps", "5Mb/s", "800K", "1000bps".
func ParseRate(s string) (clock.Rate, error) { return units.ParseRate(s) }
