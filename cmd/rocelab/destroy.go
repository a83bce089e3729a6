package main

import (
	"fmt"
	"strings"

	"github.com/rocelab/rocelab/lab/cluster"
	"github.com/rocelab/rocelab/lab/cluster/kube"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/control/lifecycle"
)

func newDestroyCmd(opts *options) *cobra.Command {
	var file, name, root, onlyPrefix string
	var all, images bool
	var kf kubeFlags
	cmd := &cobra.Command{
		Use:   "destroy (-t FILE | --name N | --all)",
		Short: "Take a lab down",
		Long: `Destroy stops a lab's node processes and removes its links, namespaces and
run directory, plus anything tagged with its name that a crashed deploy left
behind. Destroying a lab that is not there (no run directory, no
leftover) says so and exits 2; destroy --all with nothing to do exits 0.
The Docker runtime's node image (rocelab/node:…, one per rocelab binary)
stays in the engine's image cache after destroy --all, so the next docker
deploy starts at once; destroy --all --images also removes every one that
no container uses (run it while no docker deploy is in progress). -t names the
lab after the topology (as deploy does without --name); --all destroys every
lab on the machine, including those known only by their leftovers.

A lab on Kubernetes (deployed with --runtime kubernetes, or attached) goes
with its Lab resource: destroy deletes the Lab and waits until the
controller has destroyed its parts. --namespace (or --kubeconfig) also
deletes a Lab of that name that this machine does not know: one made with
kubectl, or one a killed deploy left behind. Needs root.`,
		Example: `  rocelab destroy --name laptop
  rocelab destroy --name laptop --namespace rocelab   # a Lab on Kubernetes, known here or not
  rocelab destroy -t ai-zone-64
  rocelab destroy --all          # every lab on this machine, also other people's`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			given := 0
			for _, b := range []bool{file != "", name != "", all} {
				if b {
					given++
				}
			}
			if given != 1 {
				return badInput(fmt.Errorf("give exactly one of -t, --name and --all"))
			}
			if images && !all {
				return badInput(fmt.Errorf("--images goes with --all"))
			}
			if file != "" {
				t, err := loadTopology(file)
				if err != nil {
					return err
				}
				name = t.Name
			}
			if name != "" {
				if err := state.ValidName(name); err != nil {
					return badInput(err)
				}
			}
			if err := requireRoot("destroy"); err != nil {
				return err
			}
			var rep lifecycle.Report
			var err error
			if all {
				o := deploy.DestroyOptions{Images: images}
				if onlyPrefix != "" {
					o.Only = func(lab string) bool { return strings.HasPrefix(lab, onlyPrefix) }
				}
				rep, err = cluster.DestroyAll(cmd.Context(), root, o)
			} else {
				existed := state.Exists(root, name)
				// A lab on Kubernetes goes with its Lab resource.
				ask := cmd.Flags().Changed("namespace") || cmd.Flags().Changed("kubeconfig")
				ref, kerr := destroyOnKube(cmd, kf, root, name, ask)
				if kerr != nil {
					return kerr
				}
				if ref != "" && !existed {
					fmt.Fprintf(opts.stdout, "deleted Lab %s: its parts are destroyed on every machine\n", ref)
					return nil
				}
				rep, err = cluster.Destroy(cmd.Context(), root, name)
				if err == nil && !existed && len(rep.Removed) == 0 {
					hint := "rocelab inspect lists the labs here"
					if !ask {
						hint += "; a Lab on Kubernetes: give --namespace or --kubeconfig"
					}
					return badInput(fmt.Errorf("lab %s is not deployed: nothing to destroy (%s)", name, hint))
				}
			}
			if opts.wantJSON() {
				if jerr := opts.printJSON(rep); jerr != nil {
					return jerr
				}
			} else if err == nil {
				// Nothing is called destroyed when destroy failed (a deploy
				// of the lab in progress holds its lock).
				for _, lab := range rep.Labs {
					fmt.Fprintf(opts.stdout, "destroyed lab %s\n", lab)
				}
				opts.log.Debug("removed", "objects", rep.Removed)
				fmt.Fprintf(opts.stdout, "%d object%s removed\n", len(rep.Removed), plural(len(rep.Removed)))
			}
			if len(rep.Covered) > 0 {
				fmt.Fprintf(opts.stderr, "rocelab: %d namespace%s of the lab (%s) stay behind: another tool bound %s over them after they were made (an `ip netns add` before this rocelab made %s a mount point of its own); nothing runs in them, and they go when that mount is unmounted or the machine restarts\n",
					len(rep.Covered), plural(len(rep.Covered)), strings.Join(rep.Covered, ", "), netns.RunDir, netns.RunDir)
			}
			return err
		},
	}
	cmd.Flags().StringVarP(&file, "topology", "t", "", "destroy the lab named after this topology file or built-in")
	cmd.Flags().StringVar(&name, "name", "", "lab name")
	cmd.Flags().BoolVar(&all, "all", false, "destroy every lab")
	cmd.Flags().BoolVar(&images, "images", false, "with --all: also remove the docker runtime's node images no container uses")
	cmd.Flags().StringVar(&kf.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster of a lab on Kubernetes (default $KUBECONFIG, ~/.kube/config, or in-cluster)")
	cmd.Flags().StringVar(&kf.namespace, "namespace", kube.DefaultNamespace, "with --name: also delete the Lab of that name in this Kubernetes namespace, recorded here or not (made with kubectl, or left by a killed deploy)")
	addRootFlag(cmd, &root)
	cmd.Flags().StringVar(&onlyPrefix, "only-prefix", "", "with --all, only labs whose names start with this (tests)")
	cmd.Flags().MarkHidden("only-prefix")
	return cmd
}
