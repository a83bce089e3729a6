package expect

import (
	"fmt"
	"math"
	"strconv"

	"github.com/rocelab/rocelab/core/units"
)

// Unit is the dimension of a quantity as powers of bits and seconds:
// data is kept in bits (shown in bytes), time in seconds, rates in bits
// per second. Arithmetic adds and subtracts the powers, so 1MB / 1ms is a
// rate and busbw > 2ms is an error.
type Unit struct {
	Bits, Seconds int
}

// Units.
var (
	Dimensionless = Unit{}
	Data          = Unit{Bits: 1}
	Time          = Unit{Seconds: 1}
	Rate          = Unit{Bits: 1, Seconds: -1}
	Frequency     = Unit{Seconds: -1}
)

func (u Unit) mul(v Unit) Unit { return Unit{u.Bits + v.Bits, u.Seconds + v.Seconds} }

func (u Unit) div(v Unit) Unit { return Unit{u.Bits - v.Bits, u.Seconds - v.Seconds} }

// String names the unit: "a number", "data", "a time", "a rate", …
func (u Unit) String() string {
	switch u {
	case Dimensionless:
		return "a number"
	case Data:
		return "a size"
	case Time:
		return "a time"
	case Rate:
		return "a rate"
	case Frequency:
		return "a count per second"
	}
	return fmt.Sprintf("bit^%d·s^%d", u.Bits, u.Seconds)
}

// Quantity is a number with its unit, in base units (bits, seconds).
type Quantity struct {
	Value float64
	Unit  Unit
}

// String formats q for people: 312.4 Gb/s, 1.5 MB (core/units' way for
// sizes and rates), 2ms, 0.8, 12.
func (q Quantity) String() string {
	v := q.Value
	switch q.Unit {
	case Dimensionless:
		return num(v)
	case Data:
		return units.FormatBytes(v / 8)
	case Time:
		if v == 0 {
			return "0s"
		}
		return scaled(v, "", []step{{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}, {1e-12, "ps"}})
	case Rate:
		return units.FormatRate(v)
	case Frequency:
		return num(v) + "/s"
	}
	return fmt.Sprintf("%s %s", num(v), q.Unit)
}

type step struct {
	mult float64
	name string
}

func scaled(v float64, sep string, steps []step) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return num(v)
	}
	for _, s := range steps {
		if math.Abs(v) >= s.mult {
			return num(v/s.mult) + sep + s.name
		}
	}
	last := steps[len(steps)-1]
	return num(v/last.mult) + sep + last.name
}

// num formats v with 4 significant digits, integers up to 1e15 exactly.
func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	s := strconv.FormatFloat(v, 'g', 4, 64)
	if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return s
}
