package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/topologies/graph"
)

func newGraphCmd(opts *options) *cobra.Command {
	var file, format, out string
	var full bool
	cmd := &cobra.Command{
		Use:   "graph [-t FILE] [-f svg|dot|mermaid] [-w FILE]",
		Short: "Draw a topology as SVG, Graphviz dot or Mermaid",
		Long: `Graph draws a topology in layers: hosts at the bottom, RTSW, CTSW and ATSW
above them, the front-end network beside. Large topologies are drawn
compactly (hosts with the same switches share a box, long rows are elided);
--full draws every node.`,
		Example: `  rocelab graph -w laptop.svg
  rocelab graph -t ai-zone-64 -f mermaid
  rocelab graph -t my-lab.yaml -f dot -w lab.dot`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "svg", "dot", "mermaid":
			default:
				return badInput(fmt.Errorf("--format %q: want svg, dot or mermaid", format))
			}
			t, err := loadTopology(file)
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			if err := graph.Write(&buf, t, format, graph.Options{Full: full}); err != nil {
				return err
			}
			if out == "" || out == "-" {
				_, err := opts.stdout.Write(buf.Bytes())
				return err
			}
			if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
				return fmt.Errorf("write graph: %w", err)
			}
			fmt.Fprintf(opts.stdout, "wrote the %s drawing of %s (%d nodes, %d links) to %s\n", format, t.Name, len(t.Nodes), len(t.Links), out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "topology", "t", "", "topology file or built-in name (default laptop)")
	cmd.Flags().StringVarP(&format, "format", "f", "svg", "svg, dot or mermaid")
	cmd.Flags().StringVarP(&out, "write", "w", "", "write to FILE instead of stdout")
	cmd.Flags().BoolVar(&full, "full", false, "draw every node, even for large topologies")
	return cmd
}
