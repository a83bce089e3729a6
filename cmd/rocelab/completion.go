package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/topologies"
)

// Dynamic shell completion (cobra's __complete, behind `rocelab
// completion bash|zsh|fish`): built-in topologies beside files, the
// deployed labs, their nodes and NODE:PORT targets, scenario files.
// Completion reads run directories only: nothing is changed.

// newLabName are the commands whose --name names a new lab, not a
// deployed one.
var newLabName = map[string]bool{"rocelab deploy": true, "rocelab run": true, "rocelab demo": true}

// addCompletions registers the completions of every command under root.
func addCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, name := range []string{"topology"} {
			if c.Flags().Lookup(name) != nil {
				c.RegisterFlagCompletionFunc(name, completeTopologies)
			}
		}
		if f := c.Flags().Lookup("name"); f != nil && f.Annotations[notLabAnnotation] == nil && !newLabName[c.CommandPath()] {
			c.RegisterFlagCompletionFunc("name", completeLabs)
		}
		for _, name := range []string{"from", "to", "node"} {
			if c.Flags().Lookup(name) != nil {
				c.RegisterFlagCompletionFunc(name, completeTargets(true))
			}
		}
		switch c.CommandPath() {
		case "rocelab validate":
			c.ValidArgsFunction = firstArg(completeTopologies)
		case "rocelab run":
			c.ValidArgsFunction = completeFiles("yaml", "yml")
		case "rocelab wire decode":
			c.ValidArgsFunction = completeFiles("pcap", "pcapng")
		case "rocelab exec", "rocelab restart", "rocelab stats":
			c.ValidArgsFunction = firstArg(completeTargets(false))
		case "rocelab capture", "rocelab fault add":
			c.ValidArgsFunction = firstArg(completeTargets(true))
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// firstArg completes the first positional argument with fn and leaves the
// rest to the shell (exec's command, a fault's words).
func firstArg(fn cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveDefault
		}
		return fn(cmd, args, toComplete)
	}
}

// completeTopologies offers the built-in topologies; the shell adds files.
func completeTopologies(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return withPrefix(topologies.BuiltinNames(), toComplete), cobra.ShellCompDirectiveDefault
}

// completeFiles offers files with these extensions (and directories).
func completeFiles(exts ...string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return exts, cobra.ShellCompDirectiveFilterFileExt
	}
}

// completeLabs offers the labs deployed under the command's --root.
func completeLabs(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	labs, _ := state.List(completionRoot(cmd))
	return withPrefix(labs, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeTargets offers the nodes of the lab --name picks (every lab's
// without it) and, with ports, their NODE:PORT targets.
func completeTargets(ports bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		root := completionRoot(cmd)
		labs := []string{}
		if f := cmd.Flags().Lookup("name"); f != nil && f.Value.String() != "" {
			labs = append(labs, f.Value.String())
		} else {
			labs, _ = state.List(root)
		}
		var out []string
		for _, lab := range labs {
			out = append(out, labTargets(root, lab, ports)...)
		}
		slices.Sort(out)
		return withPrefix(slices.Compact(out), toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// labTargets lists lab's nodes and, with ports, their NODE:PORT targets,
// from the copy of its topology the lab keeps (deploy.TopologyFile).
func labTargets(root, lab string, ports bool) []string {
	data, err := os.ReadFile(filepath.Join(state.Dir(root, lab), deploy.TopologyFile))
	if err != nil {
		return nil
	}
	t, err := topologies.Parse(deploy.TopologyFile, data)
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range t.Nodes {
		out = append(out, n.Name)
		if !ports {
			continue
		}
		for _, p := range n.Ports {
			out = append(out, n.Name+":"+p.Name)
		}
	}
	return out
}

// completionRoot is the run directory root the command would use.
func completionRoot(cmd *cobra.Command) string {
	if f := cmd.Flags().Lookup("root"); f != nil && f.Value.String() != "" {
		return f.Value.String()
	}
	return state.DefaultRoot
}

// withPrefix keeps the words that start with prefix.
func withPrefix(words []string, prefix string) []string {
	var out []string
	for _, w := range words {
		if strings.HasPrefix(w, prefix) {
			out = append(out, w)
		}
	}
	return out
}
