package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rocelab/rocelab/topologies"
)

func newTopoCmd(opts *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topo",
		Short: "Topology tools: generate, show, schema",
		Example: `  rocelab topo gen clos --hosts 64 --rtsw 8 -w zone64.yaml
  rocelab topo show -t zone64.yaml
  rocelab topo schema`,
	}
	cmd.AddCommand(newTopoGenCmd(opts), newTopoShowCmd(opts), newTopoSchemaCmd(opts))
	return cmd
}

func newTopoSchemaCmd(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:     "schema",
		Short:   "Print the JSON Schema of the topology format",
		Example: `  rocelab topo schema > topology.schema.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := opts.stdout.Write(topologies.Schema())
			return err
		},
	}
}

// genFlags are the generator's flags, shared by clos and multizone.
type genFlags struct {
	name, out, attach, over, zoneOver string
	hosts, gpus, rtsw, ctsw           int
	zones, atsw                       int
	rsw, fsw, storage                 int
	noFE                              bool
}

func (g *genFlags) register(fs *pflag.FlagSet, multizone bool) {
	fs.StringVar(&g.name, "name", "", "topology name (default clos or multizone)")
	fs.SetAnnotation("name", notLabAnnotation, []string{"topology"})
	fs.StringVarP(&g.out, "write", "w", "", "write to FILE instead of stdout")
	fs.IntVar(&g.hosts, "hosts", 8, "hosts per zone")
	fs.IntVar(&g.gpus, "gpus", 8, "GPUs (back-end NICs) per host")
	fs.IntVar(&g.rtsw, "rtsw", 4, "RTSWs (leaves) per zone")
	fs.IntVar(&g.ctsw, "ctsw", 4, "CTSWs (spines) per zone")
	fs.StringVar(&g.over, "oversubscription", "1", "RTSW downlink:uplink ratio, e.g. 1 or 2:1")
	fs.StringVar(&g.attach, "attach", "rack", "GPU NIC attachment: rack (to the rack's RTSW) or rail (NIC i to leaf i)")
	fs.IntVar(&g.rsw, "rsw", 0, "front-end RSWs per zone (default one per rack)")
	fs.IntVar(&g.fsw, "fsw", -1, "front-end FSWs (default 1 when there are several RSWs)")
	fs.IntVar(&g.storage, "storage", 0, "storage nodes on the front-end")
	fs.BoolVar(&g.noFE, "no-fe", false, "no front-end network")
	limit(fs, "hosts", 1, 65535)
	limit(fs, "gpus", 1, 255)
	limit(fs, "rtsw", 1, 65535)
	limit(fs, "ctsw", 1, 65535)
	limit(fs, "rsw", 0, 65535)
	limit(fs, "fsw", -1, 65535)
	limit(fs, "storage", 0, 65535)
	if multizone {
		fs.IntVar(&g.zones, "zones", 2, "AI zones")
		fs.IntVar(&g.atsw, "atsw", 4, "ATSWs joining the zones")
		fs.StringVar(&g.zoneOver, "zone-oversubscription", "1", "CTSW downlink:uplink ratio towards the ATSWs")
		limit(fs, "zones", 1, 256)
		limit(fs, "atsw", 1, 255)
	}
}

func (g *genFlags) spec(multizone bool) (*topologies.GenerateSpec, error) {
	s := &topologies.GenerateSpec{Hosts: &g.hosts, GPUs: &g.gpus, RTSW: &g.rtsw, CTSW: &g.ctsw, Attach: g.attach}
	var err error
	if s.Oversubscription, err = parseRatio("oversubscription", g.over); err != nil {
		return nil, err
	}
	if multizone {
		s.Zones, s.ATSW = &g.zones, &g.atsw
		if s.ZoneOversubscription, err = parseRatio("zone-oversubscription", g.zoneOver); err != nil {
			return nil, err
		}
	}
	if g.noFE {
		s.FE = &topologies.FESpec{Off: true}
	} else {
		s.FE = &topologies.FESpec{Storage: &g.storage}
		if g.rsw > 0 {
			s.FE.RSW = &g.rsw
		}
		if g.fsw >= 0 {
			s.FE.FSW = &g.fsw
		}
	}
	return s, nil
}

func parseRatio(flag, v string) (*topologies.Ratio, error) {
	f, err := topologies.ParseRatio(v)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flag, err)
	}
	r := topologies.Ratio(f)
	return &r, nil
}

func newTopoGenCmd(opts *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gen clos|multizone [flags] [-w FILE]",
		Short: "Generate an explicit topology file: a Clos AI zone, or several zones under an ATSW layer",
		Example: `  rocelab topo gen clos --hosts 64 --rtsw 8 -w zone64.yaml
  rocelab topo gen multizone --zones 2 -w two-zones.yaml`,
	}
	for _, kind := range []string{"clos", "multizone"} {
		g := &genFlags{}
		multizone := kind == "multizone"
		short := "One Clos AI zone (hosts, RTSW, CTSW) with the front-end beside it"
		example := `  rocelab topo gen clos --hosts 64 --rtsw 8 -w zone64.yaml
  rocelab topo gen clos --hosts 16 --gpus 8 --attach rail --oversubscription 2:1 --no-fe
  rocelab topo gen clos --name mine > mine.yaml`
		if multizone {
			short = "Several AI zones joined by an ATSW layer"
			example = `  rocelab topo gen multizone --zones 2 --hosts 8 -w two-zones.yaml
  rocelab topo gen multizone --zones 4 --atsw 8 --zone-oversubscription 2:1`
		}
		sub := &cobra.Command{
			Use:     kind,
			Short:   short,
			Example: example,
			Args:    cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				spec, err := g.spec(multizone)
				if err != nil {
					return badInput(err)
				}
				nodes, links, err := topologies.Generate(spec)
				if err != nil {
					return badInput(fmt.Errorf("topo gen %s: %w", kind, err))
				}
				name := g.name
				if name == "" {
					name = kind
				}
				var flags []string
				cmd.Flags().Visit(func(f *pflag.Flag) {
					if f.Name != "write" {
						flags = append(flags, "--"+f.Name+"="+f.Value.String())
					}
				})
				comment := []string{
					"Generated by: rocelab topo gen " + kind + " " + strings.Join(flags, " "),
					"An explicit topology: edit freely. Ports are pN in order of use.",
				}
				var buf bytes.Buffer
				if err := topologies.WriteExplicit(&buf, name, "", comment, nodes, links); err != nil {
					return err
				}
				if _, err := topologies.Parse(name+".yaml", buf.Bytes()); err != nil {
					return badInput(genProblem(spec, err))
				}
				if g.out == "" || g.out == "-" {
					_, err := opts.stdout.Write(buf.Bytes())
					return err
				}
				if err := os.WriteFile(g.out, buf.Bytes(), 0o644); err != nil {
					return fmt.Errorf("write topology: %w", err)
				}
				fmt.Fprintf(opts.stdout, "wrote topology %s (%d nodes, %d links) to %s\n", name, len(nodes), len(links), g.out)
				return nil
			},
		}
		g.register(sub.Flags(), multizone)
		cmd.AddCommand(sub)
	}
	return cmd
}

func newTopoShowCmd(opts *options) *cobra.Command {
	var file, lab string
	cmd := &cobra.Command{
		Use:   "show [-t FILE] [--lab NAME]",
		Short: "List every port: peer, rate, delay, MTU, address, MAC, interface name",
		Example: `  rocelab topo show
  rocelab topo show -t ai-zone-64 -o json
  rocelab topo show -t my-lab.yaml --lab mine`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := loadTopology(file)
			if err != nil {
				return err
			}
			if lab != "" {
				if err := t.Address(lab); err != nil {
					return badInput(err)
				}
			}
			if opts.wantJSON() {
				return opts.printJSON(t)
			}
			tw := tabwriter.NewWriter(opts.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NODE\tPORT\tPLANE\tPEER\tRATE\tDELAY\tMTU\tADDRESS\tMAC\tIFNAME")
			for _, n := range t.Nodes {
				for _, p := range n.Ports {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s:%s\t%v\t%v\t%d\t%s\t%s\t%s\n",
						n.Name, p.Name, p.Plane, p.PeerNode, p.PeerPort, p.Rate, p.Delay, p.MTU, p.Addr, p.MAC, p.IfName)
				}
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP(&file, "topology", "t", "", "topology file or built-in name (default laptop)")
	cmd.Flags().StringVar(&lab, "lab", "", "plan MACs and interface names for this lab name (default: the topology name)")
	return cmd
}

// genProblem says why a generated topology does not validate without the
// positions of a file the user never saw, and which count of switches to
// raise when a switch is past its ports or buffer.
func genProblem(spec *topologies.GenerateSpec, err error) error {
	var list topologies.ErrorList
	if !errors.As(err, &list) {
		return fmt.Errorf("the generated topology does not validate (nothing written): %w", err)
	}
	var lines []string
	hint := ""
	for _, e := range list {
		lines = append(lines, "  "+e.Msg)
		if hint != "" {
			continue
		}
		for _, role := range []string{"rtsw", "ctsw", "atsw", "rsw", "fsw"} {
			if strings.HasPrefix(e.Msg, "switch "+role) || strings.HasPrefix(e.Msg, "switch z") && strings.Contains(e.Msg, "-"+role) {
				if k := topologies.FitCount(spec, role); k > 0 {
					hint = fmt.Sprintf("\nuse --%s %d or more", role, k)
				}
				break
			}
		}
	}
	return fmt.Errorf("the generated topology does not validate (nothing written):\n%s%s", strings.Join(lines, "\n"), hint)
}
