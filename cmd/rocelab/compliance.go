package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/lab/compliance"
	"github.com/rocelab/rocelab/lab/compliance/inproc"
	"github.com/rocelab/rocelab/lab/compliance/live"
)

func newComplianceCmd(opts *options) *cobra.Command {
	var mode, junit, pcapDir, iut, mutant, labName, root, nodeNIC string
	var include, skip []string
	var scale int
	var jitter time.Duration
	cmd := &cobra.Command{
		Use:   "compliance",
		Short: "Run the MetaRoCE compliance suite (exit 0 every MUST passes, 1 one fails, 2 bad usage)",
		Long: `compliance runs the MetaRoCE compliance suite: black-box cases, each citing
the numbered requirements of docs/metaroce-spec.md it checks, in which the
tester plays the peer of an implementation under test (IUT) on the wire and
drives it through the adapter protocol of docs/compliance.md.

--iut inproc (the default) runs the reference endpoint in process on the
simulator's virtual clock: deterministic, no root, under a second.
--iut node (root) starts rocelab's endpoint node — the process a lab runs
on every host — in a network namespace of its own, plays its peer over a
veth pair from a second namespace with raw frames, and drives it through
the adapter routes of its API socket. The node runs dilated by --scale
(default 1000: the 200 us timeout is 200 ms of wall clock; the run takes
about a minute); timing checks allow --jitter of wall clock for the host's
scheduling. Everything it creates is removed when it ends, also on a
failure or Ctrl-C.
--iut lab (root) tests an RDMA NIC of a deployed lab's endpoint node as
the lab runs it (its process, its k, its addresses): --node host1:gpu1
(a node, or node:NIC; default its first NIC), --name for the lab when
there are several. The tester plays the NIC's peer from the switch end of
its link, which a "down" fault on that switch port keeps out of the
fabric for the run; the fault is removed at the end, and the rest of the
lab runs on. At the laptop lab's k of about 1900 the run takes about
1.5 minutes (--skip rc/retry-exceeded: about 15 s).

--mode is the IUT's reliability mode: rocev2 runs what any RoCEv2 RC
endpoint must do; metaroce (default) adds MetaRoCE. --case and --skip take case IDs, globs (rc/*),
area prefixes (meta) or requirement IDs (MR-5.18).

Output: a table (or -o json), --junit FILE, and with --pcap-dir a pcap of the
exchange of every failed case. Exit status: 0 when every case citing a MUST
passed, 1 when one failed, 2 on bad usage (also when a case cites a
requirement the specification does not have).`,
		Example: `  rocelab compliance
  rocelab compliance --mode rocev2 --junit compliance.xml
  rocelab compliance --case 'rc/*' --skip rc/retry-exceeded --pcap-dir failed/
  rocelab compliance --iut node
  rocelab compliance --iut lab --node host1:gpu1 --skip rc/retry-exceeded`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := endpoint.ParseMode(mode)
			if err != nil {
				return badInput(err)
			}
			if err := compliance.Validate(compliance.Cases()); err != nil {
				return badInput(fmt.Errorf("refusing to start: %w", err))
			}
			selected, err := compliance.Select(compliance.Cases(), m, include, skip)
			if err != nil {
				return badInput(err)
			}
			if iut != "lab" && cmd.Flags().Changed("root") {
				return badInput(errors.New("--root applies to --iut lab"))
			}
			ro := compliance.Options{Mode: m, Include: include, Skip: skip, PcapDir: pcapDir}
			var newEnv compliance.NewEnv
			if iut == "node" && mutant != "" && !endpoint.MutantsBuilt {
				return badInput(fmt.Errorf("--mutant %s: %w", mutant, endpoint.ErrNoMutants))
			}
			switch iut {
			case "inproc":
				if mutant != "" || cmd.Flags().Changed("scale") || cmd.Flags().Changed("jitter") {
					return badInput(errors.New("--scale, --jitter and --mutant apply to --iut node"))
				}
				if nodeNIC != "" || labName != "" {
					return badInput(errors.New("--node and --name apply to --iut lab"))
				}
				ro.IUT, newEnv = "reference endpoint (in process)", inproc.NewEnv(inproc.Options{Seed: 1})
			case "lab":
				if mutant != "" || cmd.Flags().Changed("scale") {
					return badInput(errors.New("--iut lab runs the lab's node at the lab's scale: --scale and --mutant do not apply"))
				}
				if nodeNIC == "" || jitter < 0 {
					return badInput(errors.New("--iut lab needs --node NODE[:NIC] (an endpoint node of the lab) and a jitter >= 0"))
				}
				if err := requireRoot("compliance --iut lab"); err != nil {
					return err
				}
				nodeName, nic, colon := strings.Cut(nodeNIC, ":")
				if nodeName == "" || colon && nic == "" {
					return badInput(fmt.Errorf("--node %q: want NODE or NODE:NIC (host1, host1:gpu1)", nodeNIC))
				}
				u, err := live.Attach(cmd.Context(), live.LabOptions{Root: root, Lab: labName, Node: nodeName, NIC: nic, Jitter: jitter})
				if err != nil {
					return err
				}
				defer closeIUT(u)
				ro.IUT, newEnv, ro.Progress = u.Describe(), u.NewEnv(), caseProgress(opts, len(selected))
			case "node":
				if nodeNIC != "" || labName != "" {
					return badInput(errors.New("--node and --name apply to --iut lab"))
				}
				if scale < 1 || jitter < 0 {
					return badInput(fmt.Errorf("--scale %d, --jitter %v: want a scale >= 1 and a jitter >= 0", scale, jitter))
				}
				if err := requireRoot("compliance --iut node"); err != nil {
					return err
				}
				exe, err := os.Executable()
				if err != nil {
					return err
				}
				u, err := live.Start(cmd.Context(), live.Options{Binary: exe, Scale: scale, Jitter: jitter, Seed: 1, Mutant: mutant})
				if err != nil {
					return err
				}
				defer closeIUT(u)
				ro.IUT, newEnv, ro.Progress = u.Describe(), u.NewEnv(), caseProgress(opts, len(selected))
			default:
				return badInput(fmt.Errorf("--iut %q: want inproc, node or lab", iut))
			}
			rep, err := compliance.Run(cmd.Context(), ro, newEnv)
			var u *compliance.ErrUsage
			if errors.As(err, &u) {
				return badInput(err)
			}
			if err != nil {
				return err
			}
			return writeCompliance(opts, rep, junit)
		},
	}
	f := cmd.Flags()
	f.StringVar(&mode, "mode", "metaroce", "the IUT's reliability mode: rocev2 or metaroce")
	oneOf(f, "mode", "rocev2", "metaroce")
	f.StringVar(&mode, "profile", "metaroce", "the IUT's reliability mode")
	f.MarkDeprecated("profile", "use --mode; --profile is removed in the next release")
	f.StringArrayVar(&include, "case", nil, "run only matching cases (repeatable)")
	f.StringArrayVar(&skip, "skip", nil, "skip matching cases (repeatable)")
	f.StringVar(&junit, "junit", "", "write a JUnit XML report to FILE")
	f.StringVar(&pcapDir, "pcap-dir", "", "write <case>.pcap of every failed case into DIR")
	f.StringVar(&iut, "iut", "inproc", "implementation under test: inproc (the reference endpoint on the virtual clock), node (rocelab's endpoint node in emulation; root) or lab (a NIC of a deployed lab; root)")
	f.StringVar(&nodeNIC, "node", "", "--iut lab: the endpoint node, NODE or NODE:NIC (host1:gpu1)")
	f.StringVar(&labName, "name", "", "--iut lab: the lab (default: the only lab with that node)")
	addRootFlag(cmd, &root)
	f.IntVar(&scale, "scale", live.DefaultScale, "--iut node: the node's scale factor k")
	f.DurationVar(&jitter, "jitter", live.DefaultJitter, "--iut node: wall-clock scheduling jitter the timing checks allow")
	limit(f, "scale", 1, maxScale)
	limit(f, "jitter", 0, unbounded)
	f.StringVar(&mutant, "mutant", "", "--iut node: run the node as this mutant of the reference (for showing the suite's teeth)")
	f.MarkHidden("mutant")
	return cmd
}

// caseProgress reports each case on stderr as it ends, for the emulated
// IUTs whose runs take a minute or more: "# [3/40] wire/ack pass 41ms".
func caseProgress(opts *options, total int) func(compliance.Result) {
	n := 0
	return func(r compliance.Result) {
		n++
		fmt.Fprintf(opts.stderr, "# [%d/%d] %s %s %v\n", n, total, r.Case, r.Verdict, r.Duration.Round(time.Millisecond))
	}
}

// closeIUT tears down an emulated IUT, saying on stderr what it could not
// undo (the run's verdict stands).
func closeIUT(u *live.IUT) {
	if err := u.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "rocelab:", err)
	}
}

// writeCompliance writes the report (JUnit, then table or JSON) and turns
// a failed MUST into exit 1.
func writeCompliance(opts *options, rep *compliance.Report, junit string) error {
	if junit != "" {
		f, err := os.Create(junit)
		if err != nil {
			return err
		}
		if err := rep.WriteJUnit(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	var err error
	if opts.wantJSON() {
		err = rep.WriteJSON(opts.stdout)
	} else {
		err = rep.WriteTable(opts.stdout)
	}
	if err != nil {
		return err
	}
	if !rep.OK() {
		return &exitError{code: 1, err: fmt.Errorf("compliance: %d case(s) failed", len(rep.Failed()))}
	}
	return nil
}
