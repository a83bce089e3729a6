package compliance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rocelab/rocelab/endpoint"
)

// Options configure a run.
type Options struct {
	// Mode is the IUT's: endpoint.ModeRoCEv2 runs what any RoCEv2 RC
	// endpoint must do, endpoint.ModeMetaRoCE adds MetaRoCE's cases.
	Mode    endpoint.Mode
	Include []string // --case patterns
	Skip    []string // --skip patterns
	// PcapDir receives <case>.pcap for every failed case ("" writes none).
	PcapDir string
	// IUT names the implementation in the report.
	IUT string
	// Progress, when set, is told each result as it comes.
	Progress func(Result)
}

// NewEnv makes a fresh Env for one case.
type NewEnv func(ctx context.Context) (Env, error)

// Run validates the registry, selects the cases and runs each on a fresh
// Env. It returns an error only when the suite cannot start (an invalid
// registry or filter, which is bad usage) or an Env cannot be made.
func Run(ctx context.Context, opts Options, newEnv NewEnv) (*Report, error) {
	return RunCases(ctx, Cases(), opts, newEnv)
}

// ErrUsage marks errors of the suite's configuration (exit 2).
type ErrUsage struct{ Err error }

func (e *ErrUsage) Error() string { return e.Err.Error() }
func (e *ErrUsage) Unwrap() error { return e.Err }

// RunCases is Run over a given registry.
func RunCases(ctx context.Context, all []Case, opts Options, newEnv NewEnv) (*Report, error) {
	if err := Validate(all); err != nil {
		return nil, &ErrUsage{fmt.Errorf("refusing to start: %w", err)}
	}
	cases, err := Select(all, opts.Mode, opts.Include, opts.Skip)
	if err != nil {
		return nil, &ErrUsage{err}
	}
	if opts.PcapDir != "" {
		if err := os.MkdirAll(opts.PcapDir, 0o755); err != nil {
			return nil, fmt.Errorf("pcap directory: %w", err)
		}
	}
	rep := &Report{Mode: opts.Mode, IUT: opts.IUT}
	start := time.Now()
	for i := range cases {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res, timedOut, err := runOne(ctx, &cases[i], opts, newEnv)
		if err != nil {
			return nil, err
		}
		if res.Verdict == "fail" && (timedOut && !cases[i].Timeouts || cases[i].Prompt) {
			first := res
			if res, _, err = runOne(ctx, &cases[i], opts, newEnv); err != nil {
				return nil, err
			}
			if first.Pcap != "" && res.Pcap == "" {
				os.Remove(first.Pcap) // run 2 passed: no evidence of a failure
			}
			why := "after the IUT's retransmission timer fired"
			if !timedOut {
				why = "in a case that needs the tester's answers within the IUT's reordering window"
			}
			res.Log = append([]string{fmt.Sprintf("run 1 failed %s (%s); run 2:", why, first.Detail)}, res.Log...)
			res.Reruns = 1
		}
		rep.Results = append(rep.Results, res)
		if opts.Progress != nil {
			opts.Progress(res)
		}
	}
	rep.Wall = time.Since(start)
	return rep, nil
}

// runOne runs case c on a fresh Env; timedOut reports whether the IUT had
// a retransmission timeout meanwhile (only an Env that is a
// TimeoutCounter says).
func runOne(ctx context.Context, c *Case, opts Options, newEnv NewEnv) (res Result, timedOut bool, err error) {
	lv, _ := caseLevel(c)
	res = Result{Case: c.ID, Title: c.Title, Cites: c.Cites, Level: lv.String(), Mandatory: lv.Mandatory()}
	env, err := newEnv(ctx)
	if err != nil {
		return res, false, fmt.Errorf("case %s: %w", c.ID, err)
	}
	counter, counts := env.(TimeoutCounter)
	var before int64
	if counts {
		if before, err = counter.Timeouts(); err != nil {
			counts = false
		}
	}
	t := &T{env: env, c: c, start: env.Now()}
	wall := time.Now()
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(fatal); !ok {
					t.Errorf("case panicked: %v", r)
				}
			}
		}()
		c.Run(t)
	}()
	res.Fabric = t.Since()
	res.Duration = time.Since(wall)
	if counts {
		after, err := counter.Timeouts()
		timedOut = err == nil && after > before
	}
	if cerr := env.Close(); cerr != nil {
		t.Logf("closing the env: %v", cerr)
	}
	res.Log = t.msgs
	res.Verdict = "pass"
	if t.failed {
		res.Verdict, res.Detail = "fail", t.detail
		if opts.PcapDir != "" {
			name := filepath.Join(opts.PcapDir, strings.ReplaceAll(c.ID, "/", "_")+".pcap")
			if err := writePcap(name, t.frames); err != nil {
				return res, timedOut, fmt.Errorf("case %s: %w", c.ID, err)
			}
			res.Pcap = name
		}
	}
	return res, timedOut, nil
}
