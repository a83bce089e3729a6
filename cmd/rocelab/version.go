package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

type versionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	GoVersion string `json:"go"`
	Platform  string `json:"platform"`
}

func newVersionCmd(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the rocelab version",
		Example: `  rocelab version
  rocelab version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			info := versionInfo{Version: version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" {
						info.Commit = s.Value
					}
				}
			}
			if opts.wantJSON() {
				return opts.printJSON(info)
			}
			fmt.Fprintf(opts.stdout, "rocelab %s", info.Version)
			if info.Commit != "" {
				fmt.Fprintf(opts.stdout, " (%.12s)", info.Commit)
			}
			fmt.Fprintf(opts.stdout, " %s %s\n", info.GoVersion, info.Platform)
			return nil
		},
	}
}
