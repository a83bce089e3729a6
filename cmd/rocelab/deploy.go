package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/rocelab/rocelab/lab/cluster"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/docker"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
)

// requireRoot fails a command that builds or touches a lab without root.
func requireRoot(what string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("rocelab %s needs root (network namespaces, veth pairs, node sockets): run it with sudo", what)
	}
	return nil
}

// addRootFlag adds the hidden --root flag (the run directory root; tests
// move it away from /run/rocelab).
func addRootFlag(cmd *cobra.Command, root *string) {
	cmd.Flags().StringVar(root, "root", state.DefaultRoot, "run directory root")
	cmd.Flags().MarkHidden("root")
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// progress returns a deploy progress display on w: an updating counter on
// a terminal, else a line per finished step.
func progress(w io.Writer) func(deploy.Event) {
	tty := isTerminal(w)
	verb := map[deploy.Step]string{
		deploy.StepNode: "nodes created", deploy.StepLink: "links created", deploy.StepAddress: "FE NICs addressed",
		deploy.StepStart: "node processes started", deploy.StepHealthy: "node processes healthy",
		cluster.StepPart: "machines deployed",
	}
	return func(e deploy.Event) {
		switch {
		case tty:
			fmt.Fprintf(w, "\r\033[K%-24s %d/%d", verb[e.Step], e.Done, e.Total)
			if e.Done == e.Total {
				fmt.Fprintf(w, " in %v\n", e.Elapsed.Round(time.Millisecond))
			}
		case e.Done == e.Total:
			fmt.Fprintf(w, "%-24s %d in %v\n", verb[e.Step], e.Total, e.Elapsed.Round(time.Millisecond))
		}
	}
}

func newDeployCmd(opts *options) *cobra.Command {
	var file, rt, name, scale, root string
	var agents []string
	var repair bool
	var nodeGroups int
	var exactLinks bool
	var socketLinks bool
	var kf kubeFlags
	cmd := &cobra.Command{
		Use:   "deploy [-t FILE|NAME] [--runtime netns|docker] [--name N] [--scale N|auto]",
		Short: "Build a lab from a topology and leave it running",
		Long: `Deploy builds the lab a topology describes: a network namespace per node,
a veth pair per link, the front-end NICs addressed, and a switch process per
switch. The lab keeps running after the command returns; take it down with
rocelab destroy. A topology that does not validate exits with code 2 and
creates nothing; a failed deploy removes everything it created.

--runtime docker puts every node in a Docker container (one FROM scratch
image holding this binary, which must be static: make build makes one)
instead of a plain network namespace. A host or storage node with an image:
of its own in the topology runs in a container of that image (present
locally: nothing is pulled), with its RDMA endpoint in a sidecar container
beside it; such a topology picks --runtime docker when none is given, and
--runtime netns refuses it.

-t takes a file or a built-in name (default laptop); --name names the lab
(default: the topology's name); --scale is the scale factor k (auto:
picked from the back end's aggregate rate). Progress goes to stderr, the
table of nodes to stdout (-o json: the whole lab as JSON).

--agents HOST:PORT,… spreads the lab over the machines those agents run on
(rocelab agent; docs/multi-machine.md): racks stay whole, links between
machines become VXLAN tunnels, and every node shares one fabric clock. The
other commands then reach the nodes through the agents.

--runtime kubernetes creates a Lab resource (--kubeconfig, --namespace,
default rocelab) that rocelab-controller deploys across the agents announced
in that namespace, and waits until it runs; Ctrl-C deletes it again, and
destroy deletes it. A Lab made with kubectl: rocelab attach.

--node-groups N runs the lab's nodes in N processes (fewer with fewer
nodes) whose members' models share one loop, instead of a process per
node: one wake-up then serves every node of a group, which costs less CPU
per forwarded frame, less memory and a faster deploy (docs/performance.md).
The netns runtime on one machine; restarting a node restarts its group.

--exact-links (on by default on one machine) has every frame between two
nodes carry how late its sender wrote it (a 16-byte trailer the receiver
strips), so that a sender's loop lag does not lengthen the link (PFC
cycles then match the simulator's within a few per cent) and the node
loops may run ahead of the wall clock, one wake-up for many events. Labs
across agents or on Kubernetes run without it; --exact-links=false turns
it off on one machine.

--repair (with --name, or alone for the only lab) restarts every node of a
deployed lab whose process is dead, as rocelab restart NODE does. Needs root.`,
		Example: `  rocelab deploy
  rocelab deploy -t ai-zone-64 --node-groups 2
  rocelab deploy -t my-lab.yaml --name mine --runtime docker
  rocelab deploy --repair --name laptop`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if repair {
				if file != "" || cmd.Flags().Changed("runtime") || scale != "auto" || nodeGroups != 0 || cmd.Flags().Changed("exact-links") || cmd.Flags().Changed("socket-links") {
					return badInput(fmt.Errorf("--repair takes only --name: it restarts the dead nodes of a deployed lab"))
				}
				if err := requireRoot("deploy"); err != nil {
					return err
				}
				fixed, err := cluster.Repair(cmdContext(cmd), root, name, deploy.RestartOptions{})
				for _, n := range fixed {
					fmt.Fprintf(opts.stdout, "restarted %s\n", n)
				}
				if err == nil && len(fixed) == 0 {
					fmt.Fprintln(opts.stdout, "every node is healthy: nothing to repair")
				}
				return inputErr(err)
			}
			t, err := loadTopology(file)
			if err != nil {
				return err
			}
			if name == "" {
				name = t.Name
			}
			if err := state.ValidName(name); err != nil {
				return badInput(err)
			}
			k := 0
			if scale != "auto" {
				if k, err = strconv.Atoi(scale); err != nil || k < 1 || k > maxScale {
					return badInput(fmt.Errorf("--scale %q: want 1 to %d, or auto", scale, maxScale))
				}
			}
			if rt == "" {
				// Images of the user's own need containers.
				rt = "netns"
				if t.HasContainers() {
					rt = docker.Name
				}
			}
			if rt != "netns" && rt != docker.Name && rt != "kubernetes" {
				return badInput(fmt.Errorf("--runtime %q: want netns, docker or kubernetes", rt))
			}
			if err := requireRoot("deploy"); err != nil {
				return err
			}
			if rt == "kubernetes" || len(agents) > 0 {
				// Exact links are for a lab on one machine: on by
				// default there, off across machines.
				if cmd.Flags().Changed("exact-links") && exactLinks {
					return badInput(fmt.Errorf("--exact-links is for a lab on one machine, not across agents or on Kubernetes"))
				}
				exactLinks = false
			}
			if rt == "kubernetes" {
				return deployOnKube(cmd, opts, kf, t, name, root, k)
			}
			o := deploy.Options{Topology: t, LabName: name, Root: root, Scale: k, Progress: progress(opts.stderr), NodeGroups: nodeGroups, ExactLinks: exactLinks, SocketLinks: socketLinks}
			if len(agents) > 0 && cmd.Flags().Changed("runtime") {
				return badInput(fmt.Errorf("--agents and --runtime exclude each other: the agents run the netns runtime"))
			}
			if rt == docker.Name && len(agents) == 0 {
				// The node image holds this very binary (it must be static).
				drt, err := docker.New(docker.Options{})
				if err != nil {
					return err
				}
				defer drt.Close()
				o.Runtime = drt
			}
			lab, err := cluster.Deploy(cmd.Context(), o, agents)
			if errors.Is(err, deploy.ErrExists) || errors.Is(err, deploy.ErrNeedsDocker) || errors.Is(err, deploy.ErrOptions) {
				return badInput(err)
			}
			if err != nil {
				return err
			}
			for _, w := range lab.Waits {
				fmt.Fprintln(opts.stderr, w)
			}
			if w := scaleWarning(lab.Scale, nodeGroups, k != 0); w != "" {
				fmt.Fprintln(opts.stderr, w)
			}
			if opts.wantJSON() {
				return opts.printJSON(lab)
			}
			fmt.Fprintf(opts.stdout, "lab %s (%s, runtime %s, scale %d, run dir %s)\n", lab.Name, lab.Topology, lab.Runtime, lab.Scale, lab.Dir)
			if lab.ScaleBasis != "" {
				fmt.Fprintf(opts.stdout, "scale %s\n", lab.ScaleBasis)
			}
			return deploy.WriteTable(opts.stdout, lab.Nodes, false)
		},
	}
	cmd.Flags().StringVarP(&file, "topology", "t", "", "topology file or built-in name (default laptop)")
	cmd.Flags().StringVar(&rt, "runtime", "", "node runtime: netns or docker (default: docker if the topology names images, else netns)")
	cmd.Flags().StringVar(&name, "name", "", "lab name (default: the topology's name)")
	cmd.Flags().StringVar(&scale, "scale", "auto", "scale factor k, or auto")
	cmd.Flags().BoolVar(&repair, "repair", false, "restart the dead nodes of a deployed lab instead of deploying")
	cmd.Flags().IntVar(&nodeGroups, "node-groups", 0, "run the nodes in this many processes, each group's models on one loop (0: a process per node)")
	limit(cmd.Flags(), "node-groups", 0, 65535)
	cmd.Flags().BoolVar(&socketLinks, "socket-links", false, "with --node-groups, links between two nodes of one group carry their frames through their veths (tcpdump in their namespaces sees them) instead of in memory from one model to the other")
	cmd.Flags().BoolVar(&exactLinks, "exact-links", true, "frames between nodes carry their sender's lateness, so each link's delay is exact and the node loops may run ahead (one machine only; see docs/performance.md)")
	kf.add(cmd)
	cmd.Flags().StringSliceVar(&agents, "agents", nil, "deploy across the machines of these agents (host:port,…; see rocelab agent)")
	addRootFlag(cmd, &root)
	return cmd
}
