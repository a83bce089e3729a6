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
	format         string // --format, containerlab's name for --output
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
			if err := opts.settleFormat(cmd); err != nil {
				return badInput(err)
			}
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
	// containerlab users type --format json; graph's own --format (svg,
	// dot, mermaid) shadows this one there.
	root.PersistentFlags().StringVar(&opts.format, "format", "", "same as -o/--output: table or json (containerlab's spelling)")
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
		newAttachCmd(opts),
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
		newRedeployCmd(opts),
		newAgentCmd(opts),
	)
	addCompletions(root)
	return root
}

// settleFormat makes --format json|table the output format, unless -o
// says otherwise.
func (o *options) settleFormat(cmd *cobra.Command) error {
	if o.format == "" {
		return nil
	}
	if cmd.Flags().Changed("output") && o.output != o.format {
		return fmt.Errorf("--format %s and -o %s disagree: give one", o.format, o.output)
	}
	switch o.format {
	case "table", "json":
	default:
		return fmt.Errorf("--format %q: want table or json (the same as -o)", o.format)
	}
	o.output = o.format
	return nil
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
