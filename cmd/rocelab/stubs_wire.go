package main

// Placeholder until the wire commands land; replaced by wire.go.

import "github.com/spf13/cobra"

func newWireCmd(opts *options) *cobra.Command {
	return &cobra.Command{Use: "wire", Short: "Packet codecs (not built yet)"}
}
