package sandbox

import (
	"context"
	"errors"
	"io"
)

// Capabilities a Runtime may offer beyond the interface every runtime has.
// The deploy asks for them by interface, never by a runtime's name, so a
// third runtime (another container engine, an agent on another machine)
// plugs in by implementing what it needs: the docker runtime implements all
// three, the netns runtime none.

// ContainerNodes is a runtime whose nodes are containers that run their
// node process themselves from Create on: the process blocks reading its
// config from a FIFO in the run directory (NodeArgv's cfg) until the deploy
// feeds it, after the links exist; and the deploy records the containers,
// not the processes.
type ContainerNodes interface {
	// NodeArgv is the node process's command line inside a node, reading
	// its config from cfg (a path in the run directory).
	NodeArgv(cfg string) []string
	// ContainerNames are the names of the containers Create makes for
	// node of lab, in order: the node's own, then — with sidecar, for a
	// user container beside which the node process runs — the sidecar's.
	// The last runs the node's process.
	ContainerNames(lab, node string, sidecar bool) []string
}

// Observer reads how a runtime's object is doing, for errors and health.
type Observer interface {
	// Running returns nil while the object ref runs, else an error that
	// says how it ended and wraps ErrNotRunning.
	Running(ctx context.Context, ref Ref) error
	// Logs writes the object's output so far to w.
	Logs(ctx context.Context, ref Ref, w io.Writer) error
}

// Images is a runtime that runs images: the lab's own node image, made
// ready before a deploy creates anything, and the user's images that
// topology nodes name (Node.Container), which must be present.
type Images interface {
	PrepareNodeImage(ctx context.Context) error
	HasImage(ctx context.Context, image string) error
}

// ErrNotRunning is wrapped by Observer.Running for an object that stopped.
var ErrNotRunning = errors.New("is not running")
