package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/lab/compliance"
	"github.com/rocelab/rocelab/lab/compliance/inproc"
)

func newComplianceCmd(opts *options) *cobra.Command {
	var profile, junit, pcapDir, iut string
	var include, skip []string
	cmd := &cobra.Command{
		Use:   "compliance",
		Short: "Run the MetaRoCE compliance suite (exit 0 every MUST passes, 1 one fails, 2 bad usage)",
		Long: `compliance runs the MetaRoCE compliance suite: black-box cases, each citing
the numbered requirements of docs/metaroce-spec.md it checks, in which the
tester plays the peer of an implementation under test (IUT) on the wire and
drives it through the adapter protocol of docs/compliance.md.

--iut inproc (the default and, for now, the only target) runs the reference
endpoint in process on the simulator's virtual clock: deterministic, no
root, under a second. Profiles: rocev2 runs what any RoCEv2 RC endpoint must
do; metaroce (default) adds MetaRoCE. --case and --skip take case IDs, globs
(rc/*), area prefixes (meta) or requirement IDs (MR-5.18).

Output: a table (or -o json), --junit FILE, and with --pcap-dir a pcap of the
exchange of every failed case. Exit status: 0 when every case citing a MUST
passed, 1 when one failed, 2 on bad usage (also when a case cites a
requirement the specification does not have).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := compliance.ParseProfile(profile)
			if err != nil {
				return badInput(err)
			}
			if iut != "inproc" {
				return badInput(fmt.Errorf("--iut %q: want inproc", iut))
			}
			rep, err := compliance.Run(cmd.Context(), compliance.Options{Profile: p, Include: include, Skip: skip, PcapDir: pcapDir,
				IUT: "reference endpoint (in process)"}, inproc.NewEnv(inproc.Options{Seed: 1}))
			var u *compliance.ErrUsage
			if errors.As(err, &u) {
				return badInput(err)
			}
			if err != nil {
				return err
			}
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
		},
	}
	f := cmd.Flags()
	f.StringVar(&profile, "profile", "metaroce", "rocev2 or metaroce")
	f.StringArrayVar(&include, "case", nil, "run only matching cases (repeatable)")
	f.StringArrayVar(&skip, "skip", nil, "skip matching cases (repeatable)")
	f.StringVar(&junit, "junit", "", "write a JUnit XML report to FILE")
	f.StringVar(&pcapDir, "pcap-dir", "", "write <case>.pcap of every failed case into DIR")
	f.StringVar(&iut, "iut", "inproc", "implementation under test: inproc (the reference endpoint on the virtual clock)")
	return cmd
}
