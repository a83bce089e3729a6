package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
)

// options are the flags every command shares. They are built once per
// root command and handed to each command's constructor: no singleton.
type options struct {
	stdout, stderr io.Writer
	output         string // table or json
	verbose        bool
	log            *slog.Logger
}

// printJSON writes v as indented JSON to stdout.
func (o *options) printJSON(v any) error {
	enc := json.NewEncoder(o.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// wantJSON reports whether -o json was given.
func (o *options) wantJSON() bool { return o.output == "json" }

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	opts := &options{stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:   "rocelab",
		Short: "Build and poke at RoCE AI-training fabrics on one Linux machine",
		Long: `rocelab builds the two networks of an AI training cluster — a RoCE back-end
fabric with shared buffers, PFC and ECN, and a front-end network — out of
network namespaces, veth pairs and software switches, drives RDMA traffic
through them, injects faults, and shows what the fabric did.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			switch opts.output {
			case "table", "json":
			default:
				return badInput(fmt.Errorf("-o %q: want table or json", opts.output))
			}
			if err := checkFlags(cmd); err != nil {
				return badInput(err)
			}
			level := slog.LevelInfo
			if opts.verbose {
				level = slog.LevelDebug
			}
			opts.log = slog.New(slog.NewTextHandler(opts.stderr, &slog.HandlerOptions{Level: level}))
			watchInterrupt(cmd, opts.stderr)
			return nil
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	// --version as well as the version command (which adds the commit,
	// Go and platform).
	root.Version = version
	root.SetVersionTemplate("rocelab {{.Version}}\n")
	root.PersistentFlags().StringVarP(&opts.output, "output", "o", "table", "output format where output is tabular: table or json")
	root.PersistentFlags().BoolVarP(&opts.verbose, "verbose", "v", false, "debug logging on stderr")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return badInput(err) })

	root.AddCommand(
		newVersionCmd(opts),
		newComplianceCmd(opts),
		newDemoCmd(opts),
		exitOnInterrupt(newWireCmd(opts)),
		exitOnInterrupt(newValidateCmd(opts)),
		exitOnInterrupt(newTopoCmd(opts)),
		exitOnInterrupt(newGraphCmd(opts)),
		newNodeCmd(opts),
		newDeployCmd(opts),
		newDestroyCmd(opts),
		newInspectCmd(opts),
		newExecCmd(opts),
		newStatsCmd(opts),
		newDashboardCmd(opts),
		newCaptureCmd(opts),
		newPerfCmd(opts),
		newCollectiveCmd(opts),
		newRunCmd(opts),
		newFaultCmd(opts),
		newRestartCmd(opts),
		newAgentCmd(opts),
	)
	return root
}

// isUsageError recognises cobra's argument errors, which it returns unwrapped.
func isUsageError(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "unknown command") ||
		strings.HasPrefix(msg, "accepts ") ||
		strings.HasPrefix(msg, "requires at least") ||
		strings.HasPrefix(msg, "unknown flag") ||
		strings.HasPrefix(msg, "required flag")
}
