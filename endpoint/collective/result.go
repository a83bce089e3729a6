package collective

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/core/units"
)

// Result is one line of an nccl-tests table, JSON-friendly.
type Result struct {
	Op      string  `json:"op"`
	Ranks   int     `json:"ranks"`
	Size    int64   `json:"size_bytes"`              // nccl-tests size, see Layout
	Count   int64   `json:"count"`                   // Size / element size
	Type    string  `json:"type"`                    // float or int32
	RedOp   string  `json:"redop"`                   // sum, or none for non-reducing collectives
	TimeUs  float64 `json:"time_us"`                 // average over the measured iterations
	AlgBW   float64 `json:"algbw_gbytes_per_second"` // GB/s (1e9 bytes/s) = Size / time, as nccl-tests prints it
	BusBW   float64 `json:"busbw_gbytes_per_second"` // AlgBW × BusFactor(op, n), GB/s
	Wrong   int64   `json:"wrong"`                   // wrong elements, summed over ranks, worst iteration
	Checked bool    `json:"checked"`                 // false when data checks were off (#wrong is N/A)
	Warmup  int     `json:"warmup"`
	Iters   int     `json:"iters"`
}

// BusFactor is nccl-tests' factor from algbw to busbw (doc/PERFORMANCE.md):
// 2(n-1)/n for all_reduce, (n-1)/n for all_gather, reduce_scatter and
// alltoall.
func BusFactor(op Op, n int) float64 { return op.busFactor(n) }

func (r *run) result() Result {
	lay, cfg := r.lay, r.c.cfg
	res := Result{
		Op: lay.Op.String(), Ranks: lay.Ranks, Size: lay.Size, Count: lay.Count,
		Type: cfg.Type.String(), RedOp: "none", Wrong: r.wrong, Checked: cfg.Check,
		Warmup: r.warmup, Iters: r.iters,
	}
	if lay.Op.reduces() {
		res.RedOp = "sum"
	}
	avg := r.total.Seconds() / float64(r.iters)
	res.TimeUs = avg * 1e6
	if avg > 0 {
		res.AlgBW = float64(lay.Size) / avg / 1e9
		res.BusBW = res.AlgBW * BusFactor(lay.Op, lay.Ranks)
	}
	return res
}

// Combine merges the results of the processes of one distributed run (see
// the package documentation): the slowest process's time, algbw and busbw,
// and the sum of the wrong counts. The other fields
// come from the first result.
func Combine(results []Result) (Result, error) {
	if len(results) == 0 {
		return Result{}, fmt.Errorf("combine: no results")
	}
	out := results[0]
	out.Wrong = 0
	for _, r := range results {
		if r.Op != out.Op || r.Size != out.Size || r.Ranks != out.Ranks || r.Iters != out.Iters {
			return Result{}, fmt.Errorf("combine: %s of %d B on %d ranks with %s of %d B on %d ranks",
				out.Op, out.Size, out.Ranks, r.Op, r.Size, r.Ranks)
		}
		if r.TimeUs > out.TimeUs {
			out.TimeUs, out.AlgBW, out.BusBW = r.TimeUs, r.AlgBW, r.BusBW
		}
		out.Wrong += r.Wrong
		out.Checked = out.Checked && r.Checked
	}
	return out, nil
}

// WriteTable prints results the way nccl-tests does (out-of-place columns
// only).
func WriteTable(w io.Writer, results []Result) error {
	var b strings.Builder
	b.WriteString("#       size         count      type   redop     time   algbw   busbw  #wrong\n")
	b.WriteString("#        (B)    (elements)                       (us)  (GB/s)  (GB/s)        \n")
	for _, r := range results {
		wrong := "N/A"
		if r.Checked {
			wrong = strconv.FormatInt(r.Wrong, 10)
		}
		fmt.Fprintf(&b, "%12d  %12d  %8s  %6s  %7s  %6.2f  %6.2f  %6s\n",
			r.Size, r.Count, r.Type, r.RedOp, FormatTime(r.TimeUs), r.AlgBW, r.BusBW, wrong)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// FormatTime prints microseconds like nccl-tests: two decimals below 10 ms,
// one below 100 ms... kept to at most 7 characters.
func FormatTime(us float64) string {
	switch {
	case us < 10000:
		return strconv.FormatFloat(us, 'f', 2, 64)
	case us < 100000:
		return strconv.FormatFloat(us, 'f', 1, 64)
	default:
		return strconv.FormatFloat(us, 'f', 0, 64)
	}
}

// ParseSizes parses a size sweep: "MIN:MAX" doubles from MIN up to MAX,
// "MIN:MAX:xF" multiplies by F, "MIN:MAX:+STEP" adds STEP, and a comma list
// ("1M,4M,64M") gives sizes as is; a single size is a one-element sweep.
// Units follow nccl-tests' -b/-e flags and are powers of two: B, K/KB/KiB,
// M/MB/MiB, G/GB/GiB, T/TB/TiB (case-insensitive); see ParseSize.
func ParseSizes(spec string) ([]int64, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, fmt.Errorf("empty size range")
	}
	if strings.Contains(spec, ",") {
		var out []int64
		for _, f := range strings.Split(spec, ",") {
			v, err := ParseSize(f)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	parts := strings.Split(spec, ":")
	if len(parts) > 3 {
		return nil, fmt.Errorf("size range %q: want MIN:MAX[:xF|:+STEP]", spec)
	}
	lo, err := ParseSize(parts[0])
	if err != nil {
		return nil, err
	}
	if len(parts) == 1 {
		return []int64{lo}, nil
	}
	hi, err := ParseSize(parts[1])
	if err != nil {
		return nil, err
	}
	if hi < lo {
		return nil, fmt.Errorf("size range %q: max below min", spec)
	}
	factor, step := int64(2), int64(0)
	if len(parts) == 3 {
		p := strings.TrimSpace(parts[2])
		switch {
		case strings.HasPrefix(p, "x"):
			factor, err = strconv.ParseInt(p[1:], 10, 64)
			if err != nil || factor < 2 {
				return nil, fmt.Errorf("size range %q: factor %q, want an integer >= 2", spec, p)
			}
		case strings.HasPrefix(p, "+"):
			step, err = ParseSize(p[1:])
			if err != nil || step < 1 {
				return nil, fmt.Errorf("size range %q: step %q, want a size >= 1", spec, p)
			}
		default:
			return nil, fmt.Errorf("size range %q: third field %q, want xF or +STEP", spec, p)
		}
	}
	if lo == 0 && step == 0 {
		return nil, fmt.Errorf("size range %q: a multiplied range cannot start at 0", spec)
	}
	var out []int64
	for v := lo; v <= hi; {
		out = append(out, v)
		if len(out) > 1<<16 {
			return nil, fmt.Errorf("size range %q: more than %d sizes", spec, 1<<16)
		}
		if step > 0 {
			v += step
		} else {
			v *= factor
		}
	}
	return out, nil
}

// ParseSize parses one size as nccl-tests' -b/-e read it: 8, 512K, 1MB,
// 4MiB, 2G — the one place rocelab's grammar (core/units) reads K, KB and
// KiB alike as 1024, because nccl-tests defines them so.
func ParseSize(s string) (int64, error) {
	n, err := units.ParseSizeBinary(s)
	if err != nil {
		return 0, fmt.Errorf("message size: %w", err)
	}
	return n, nil
}
