package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rocelab/rocelab/lab/cluster"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/rocelab/rocelab/lab/cluster/kube"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/topologies"
)

// kubeFlags are the flags of the commands that talk to a Kubernetes
// cluster.
type kubeFlags struct {
	kubeconfig, namespace string
}

func (k *kubeFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&k.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default $KUBECONFIG, ~/.kube/config, or in-cluster)")
	cmd.Flags().StringVar(&k.namespace, "namespace", kube.DefaultNamespace, "Kubernetes namespace of the Lab resources and agent leases")
}

// client connects to the cluster.
func (k *kubeFlags) client() (*kube.Client, error) {
	cfg, err := kube.Config(k.kubeconfig)
	if err != nil {
		return nil, err
	}
	return kube.NewClient(cfg)
}

// splitRef splits "namespace/name".
func splitRef(ref string) (ns, name string) {
	ns, name, ok := strings.Cut(ref, "/")
	if !ok {
		return kube.DefaultNamespace, ref
	}
	return ns, name
}

// deployOnKube creates the Lab for t, waits until it runs, and records it
// here so that the other commands reach its nodes through their agents.
func deployOnKube(cmd *cobra.Command, opts *options, kf kubeFlags, t *topologies.Topology, name, root string, scale int) error {
	c, err := kf.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmdContext(cmd), 10*time.Minute)
	defer cancel()
	lab, err := c.Deploy(ctx, kf.namespace, name, t, scale, 0, func(phase, msg string) {
		fmt.Fprintf(opts.stderr, "Lab %s/%s: %s %s\n", kf.namespace, name, phase, msg)
	})
	if errors.Is(err, deploy.ErrExists) {
		return badInput(err)
	}
	if err != nil {
		return err
	}
	if err := cluster.Adopt(root, lab, t.Text()); err != nil {
		return err
	}
	if opts.wantJSON() {
		return opts.printJSON(lab)
	}
	fmt.Fprintf(opts.stdout, "lab %s (%s, Lab %s, runtime %s, scale %d)\n", lab.Name, lab.Topology, lab.Kubernetes, lab.Runtime, lab.Scale)
	if err := deploy.WriteMachines(opts.stdout, lab); err != nil {
		return err
	}
	return deploy.WriteTable(opts.stdout, lab.Nodes, false)
}

// destroyOnKube deletes the Lab resource of lab and waits until it is
// gone: the one its record here names (a lab deployed with --runtime
// kubernetes, or attached), else, when asked (ask: --namespace or
// --kubeconfig given), the Lab of that name in kf's namespace if the
// cluster has one (made with kubectl, or left by a deploy killed before it
// could delete it). It returns the Lab's "namespace/name" ("" if none).
func destroyOnKube(cmd *cobra.Command, kf kubeFlags, root, lab string, ask bool) (string, error) {
	ns, name := "", ""
	if l, err := deploy.Deployed(root, lab); err == nil && l.Kubernetes != "" {
		ns, name = splitRef(l.Kubernetes)
	} else if ask {
		ns, name = kf.namespace, lab
	} else {
		return "", nil
	}
	c, err := kf.client()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(cmdContext(cmd), 5*time.Minute)
	defer cancel()
	if _, err := c.GetLab(ctx, ns, name); apierrors.IsNotFound(err) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("Lab %s/%s: %w", ns, name, err)
	}
	return ns + "/" + name, c.Destroy(ctx, ns, name)
}
