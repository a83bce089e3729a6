package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/rocelab/rocelab/lab/cluster"
	"github.com/rocelab/rocelab/lab/cluster/kube"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
)

// newAttachCmd is `rocelab attach`: a Lab that rocelab-controller runs,
// made by kubectl or on another machine, recorded here so that this
// machine's commands reach its nodes through their agents.
func newAttachCmd(opts *options) *cobra.Command {
	var name, root string
	var kf kubeFlags
	cmd := &cobra.Command{
		Use:   "attach [--name LAB] [--namespace NS] [--kubeconfig FILE]",
		Short: "Use a Lab on Kubernetes (made with kubectl, or elsewhere) from this machine",
		Long: `Attach reads a Lab resource that rocelab-controller runs — one made with
kubectl apply, or by rocelab deploy --runtime kubernetes on another machine —
and records it here, as deploy --runtime kubernetes does for its own: inspect,
perf, collective, stats, fault, exec, capture and the rest then reach its
nodes through their machines' agents, and destroy deletes the Lab. With
--name, that Lab; without, every running Lab of the namespace. A Lab that
is not running yet says what it is doing (attach again when it runs); a
lab of the same name deployed here otherwise is left alone, and is an
error. Attaching a lab attached already does nothing. Needs root (the
record lives in the run directory).`,
		Example: `  rocelab attach --name laptop
  rocelab attach --namespace rocelab --kubeconfig ~/.kube/config   # every running Lab there`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireRoot("attach"); err != nil {
				return err
			}
			c, err := kf.client()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmdContext(cmd), 2*kube.CallTimeout)
			defer cancel()
			var labs []kube.Lab
			if name != "" {
				l, err := c.GetLab(ctx, kf.namespace, name)
				if err != nil {
					return inputErr(fmt.Errorf("Lab %s/%s: %w", kf.namespace, name, notDeployedIf(err)))
				}
				labs = append(labs, *l)
			} else if labs, err = c.Labs(ctx, kf.namespace); err != nil {
				return err
			}
			attached := 0
			for _, l := range labs {
				dl, err := kube.Record(&l)
				if err != nil && name == "" {
					fmt.Fprintf(opts.stderr, "rocelab: %v\n", err)
					continue
				}
				if err != nil {
					return err
				}
				how, err := attachLab(root, dl, []byte(l.Spec.Topology))
				if err != nil {
					return err
				}
				attached++
				fmt.Fprintf(opts.stdout, "lab %s: %s (Lab %s, %d nodes on %d machines, scale %d)\n", dl.Name, how, dl.Kubernetes, len(dl.Nodes), len(dl.Machines), dl.Scale)
			}
			if attached == 0 && name == "" {
				fmt.Fprintf(opts.stdout, "no running Lab in namespace %s\n", kf.namespace)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the Lab's name (default: every running Lab of the namespace)")
	kf.add(cmd)
	addRootFlag(cmd, &root)
	return cmd
}

// attachLab records dl, a Lab's lab, under root unless it is there
// already; a lab of that name that is not this Lab's is an error.
func attachLab(root string, dl *deploy.Lab, topology []byte) (string, error) {
	if have, err := deploy.Deployed(root, dl.Name); err == nil {
		if have.Kubernetes != dl.Kubernetes {
			return "", badInput(fmt.Errorf("lab %s: a lab of that name is deployed here already (runtime %s%s): destroy it first, or attach on another machine", dl.Name, have.Runtime, refOf(have)))
		}
		return "attached already", nil
	}
	if err := cluster.Adopt(root, dl, topology); err != nil {
		return "", err
	}
	return "attached", nil
}

func refOf(l *deploy.Lab) string {
	if l.Kubernetes == "" {
		return ""
	}
	return ", Lab " + l.Kubernetes
}

// notDeployedIf is err, marked as a lab that is not there (bad input) when
// the API server says the Lab is not found.
func notDeployedIf(err error) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: %w (kubectl get labs -A lists them)", deploy.ErrNoLab, err)
	}
	return err
}
