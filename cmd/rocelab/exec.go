package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/rocelab/rocelab/lab/cluster"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
)

func newExecCmd(opts *options) *cobra.Command {
	var name, root string
	cmd := &cobra.Command{
		Use:   "exec NODE [--name N] -- CMD [ARG…]",
		Short: "Run a command inside a lab node",
		Long: `Exec runs a command inside a node's network namespace with stdin, stdout and
stderr attached, and exits with the command's exit code:

  rocelab exec host1 -- ping -c 3 198.19.0.8

In a docker lab, a node with an image of its own runs the command in its
container (with the image's tools); a node in the lab's own image, which has
none, runs the host's command in the container's network namespace.

--name picks the lab when several have a node of that name. Needs root.`,
		Example: `  rocelab exec host1 -- ping -c 3 198.19.0.9
  rocelab exec host1 --name laptop -- ibv_devinfo
  rocelab exec rtsw1 -- ip -br link`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 {
				return badInput(errors.New("usage: rocelab exec NODE -- CMD [ARG…]"))
			}
			if err := requireRoot("exec"); err != nil {
				return err
			}
			code, err := cluster.Exec(cmd.Context(), root, name, args[0], args[1:], sandbox.Stdio{In: os.Stdin, Out: opts.stdout, Err: opts.stderr})
			if err != nil {
				return inputErr(err)
			}
			if code != 0 {
				return &exitError{code: code, err: fmt.Errorf("%s: %s exited with status %d", args[0], args[1], code)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "lab name")
	addRootFlag(cmd, &root)
	return cmd
}
