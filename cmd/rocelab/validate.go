package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/topologies"
)

// loadTopology reads the topology named by -t: a file, else a built-in
// name (laptop, incast, …); empty means the built-in laptop topology.
// Anything wrong with it is bad input (exit 2).
func loadTopology(path string) (*topologies.Topology, error) {
	if path == "" {
		path = topologies.DefaultTopology
	}
	if _, err := os.Stat(path); err != nil {
		if _, berr := topologies.BuiltinFile(path); berr == nil {
			return topologies.Builtin(path)
		}
	}
	t, err := topologies.Load(path)
	return t, badInput(err)
}

type validateResult struct {
	File   string               `json:"file"`
	Valid  bool                 `json:"valid"`
	Errors topologies.ErrorList `json:"errors,omitempty"`
	*topologies.Summary
}

func newValidateCmd(opts *options) *cobra.Command {
	var file, chakraDir, chakraPrefix string
	var schema bool
	cmd := &cobra.Command{
		Use:   "validate [FILE | -t FILE | --chakra DIR]",
		Short: "Check a topology file (or a folder of Chakra execution traces) and summarise it",
		Long: `Validate reads a topology file, reports every problem as FILE:LINE:COL: message
(exit code 2), or prints a short summary. The file is given as an argument or
with -t (not both); without one it checks the built-in laptop topology. A
built-in name (laptop, incast, ai-zone-64, two-zones) works too. --schema
prints the JSON Schema of the format instead. --chakra DIR checks the MLCommons
Chakra execution traces PREFIX.RANK.et in DIR (--prefix, default the only
prefix there): every rank's file, each node's type and fields, dependencies
that point nowhere, cycles, sends without a peer — each problem named by its
file and node (exit 2).

  rocelab validate topologies/laptop.yaml
  rocelab validate -t ai-zone-64`,
		Example: `  rocelab validate
  rocelab validate my-lab.yaml
  rocelab validate -t ai-zone-64
  rocelab validate --schema > topology.schema.json
  rocelab validate --chakra workloads/chakra/testdata --prefix allreduce`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if file != "" && file != args[0] {
					return badInput(fmt.Errorf("validate: give the topology once, as FILE or -t FILE (got %q and -t %q)", args[0], file))
				}
				file = args[0]
			}
			if schema {
				_, err := opts.stdout.Write(topologies.Schema())
				return err
			}
			if chakraDir != "" {
				if file != "" {
					return badInput(fmt.Errorf("validate: a topology or --chakra, not both"))
				}
				return validateChakra(opts, chakraDir, chakraPrefix)
			}
			name := file
			if name == "" {
				name = topologies.DefaultTopology
			}
			t, err := loadTopology(file)
			var el topologies.ErrorList
			if errors.As(err, &el) {
				if opts.wantJSON() {
					if jerr := opts.printJSON(validateResult{File: name, Errors: el}); jerr != nil {
						return jerr
					}
				} else {
					for _, e := range el {
						fmt.Fprintln(opts.stderr, e)
					}
				}
				return badInput(fmt.Errorf("%s: %d error%s", name, len(el), plural(len(el))))
			}
			if err != nil {
				return err
			}
			s := t.Summary()
			if opts.wantJSON() {
				return opts.printJSON(validateResult{File: t.Source, Valid: true, Summary: &s})
			}
			fmt.Fprintf(opts.stdout, "%s: ok — %s", t.Source, t.Name)
			if t.Description != "" {
				fmt.Fprintf(opts.stdout, ": %s", t.Description)
			}
			fmt.Fprintf(opts.stdout, "\n  nodes  %d (%d hosts, %d switches, %d storage)\n  GPUs   %d\n  links  %d (%d back-end, %d front-end)\n",
				s.Nodes, s.Hosts, s.Switches, s.Storage, s.GPUs, s.Links, s.BELinks, s.FELinks)
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "topology", "t", "", "topology file or built-in name (default laptop)")
	cmd.Flags().BoolVar(&schema, "schema", false, "print the JSON Schema of the topology format")
	cmd.Flags().StringVar(&chakraDir, "chakra", "", "check the Chakra execution traces in this folder instead")
	cmd.Flags().StringVar(&chakraPrefix, "prefix", "", "with --chakra: the traces' file prefix (PREFIX.RANK.et; default the only one there)")
	return cmd
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
