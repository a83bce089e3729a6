package units

import (
	"math"
	"slices"
	"strconv"
)

// The printing rule (docs/topology.md, "Units"): sizes and rates printed for
// people are decimal SI with a space, to at most 4 significant digits —
// "2.74 MB", "400 Gb/s", "1500 B". A size that 4 decimal digits cannot
// show exactly but that is a whole number of KiB, MiB, GiB or TiB prints
// in that binary unit ("4 KiB", "32 MiB"), since that is how it was
// configured. Sizes a format defines as binary (nccl-tests message sizes)
// print with FormatSizeBinary. Everything printed parses back with
// ParseSize or ParseRate to the same meaning.

type step struct {
	mult float64
	name string
}

var (
	decimalSizes = []step{{1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}, {1, "B"}}
	binarySizes  = []step{{1 << 40, "TiB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}, {1, "B"}}
	rates        = []step{{1e12, "Tb/s"}, {1e9, "Gb/s"}, {1e6, "Mb/s"}, {1e3, "Kb/s"}, {1, "b/s"}}
)

// FormatSize prints n bytes for people: "2.74 MB", "64 KB", "4 KiB", "0 B".
func FormatSize(n int64) string {
	dec, exact := scaled(float64(n), decimalSizes)
	if n < 1024 || n%1024 != 0 {
		return dec
	}
	for _, st := range binarySizes {
		m := int64(st.mult)
		if m > 1 && n >= m && n%m == 0 {
			bin := strconv.FormatInt(n/m, 10) + " " + st.name
			if !exact || digits(bin) < digits(dec) {
				return bin
			}
			break
		}
	}
	return dec
}

func digits(s string) int {
	n := 0
	for _, c := range s {
		if c >= '0' && c <= '9' {
			n++
		}
	}
	return n
}

// FormatBytes prints a measured byte count (a queue depth, a total) the
// way FormatSize does; fractions of a byte are rounded.
func FormatBytes(b float64) string {
	if math.IsNaN(b) || math.IsInf(b, 0) || math.Abs(b) >= 1<<62 {
		s, _ := scaled(b, decimalSizes)
		return s
	}
	return FormatSize(int64(math.Round(b)))
}

// FormatSizeBinary prints n bytes in binary units, for the sizes a format
// defines as binary (nccl-tests): "1 MiB", "512 KiB", "1.5 GiB".
func FormatSizeBinary(n int64) string {
	s, _ := scaled(float64(n), binarySizes)
	return s
}

// FormatRate prints bits per second for people: "400 Gb/s", "12.5 Mb/s".
func FormatRate(bps float64) string {
	s, _ := scaled(bps, rates)
	return s
}

// scaled prints v in the largest step it reaches, to 4 significant digits;
// exact reports whether that loses nothing.
func scaled(v float64, steps []step) (string, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64) + " " + steps[len(steps)-1].name, false
	}
	st := steps[len(steps)-1]
	for _, s := range steps {
		if math.Abs(v) >= s.mult {
			st = s
			break
		}
	}
	t := strconv.FormatFloat(v/st.mult, 'g', 4, 64)
	f, _ := strconv.ParseFloat(t, 64)
	if i := slices.Index(steps, st); math.Abs(f) >= 1000 && i > 0 {
		st = steps[i-1] // 999999 B rounds to 1000 KB: say 1 MB
		t = strconv.FormatFloat(v/st.mult, 'g', 4, 64)
		f, _ = strconv.ParseFloat(t, 64)
	}
	if math.Abs(f) < 1e15 {
		t = strconv.FormatFloat(f, 'f', -1, 64) // no exponent: 1234, not 1.234e+03
	}
	return t + " " + st.name, math.Abs(f*st.mult-v) < 0.5
}
