package main

// Placeholder until the topology commands land; replaced by validate.go, topo.go, graph.go.

import "github.com/spf13/cobra"

func newValidateCmd(opts *options) *cobra.Command {
	return &cobra.Command{Use: "validate", Short: "Validate a topology (not built yet)"}
}

func newTopoCmd(opts *options) *cobra.Command {
	return &cobra.Command{Use: "topo", Short: "Topology tools (not built yet)"}
}

func newGraphCmd(opts *options) *cobra.Command {
	return &cobra.Command{Use: "graph", Short: "Draw a topology (not built yet)"}
}
