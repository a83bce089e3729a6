package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"runtime"
	"strconv"
	"strings"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	vns "github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// containerPath is the PATH a command name is looked up in inside the
// container (the engine's default: the node image sets none).
const containerPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// inContainer reports whether name is an executable file in the file
// system of the container whose init is pid: a path, or a command name
// looked up in containerPath. Paths resolve inside the container's root
// (RESOLVE_IN_ROOT), symbolic links included.
func inContainer(pid int, name string) bool {
	root, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(root)
	var candidates []string
	if strings.Contains(name, "/") {
		candidates = []string{path.Join("/", name)}
	} else {
		for _, dir := range strings.Split(containerPath, ":") {
			candidates = append(candidates, path.Join(dir, name))
		}
	}
	for _, c := range candidates {
		fd, err := unix.Openat2(root, c, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT})
		if err != nil {
			continue
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		unix.Close(fd)
		if err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Mode&0o111 != 0 {
			return true
		}
	}
	return false
}

// ExecHost runs the host's argv[0] (looked up in the host's PATH) in the
// network namespace at nsPath (such as a Node's NetNSPath), with the
// host's file system, and returns its exit code (128+signal if a signal
// ended it). Cancelling ctx kills it.
func ExecHost(ctx context.Context, nsPath string, argv []string, stdio sandbox.Stdio) (int, error) {
	if len(argv) == 0 {
		return -1, errors.New("exec: empty command")
	}
	bin, err := exec.LookPath(argv[0])
	if err != nil {
		return -1, fmt.Errorf("exec %s: not in the container and not on the host: %w", argv[0], err)
	}
	target, err := vns.GetFromPath(nsPath)
	if err != nil {
		return -1, fmt.Errorf("exec %s: open netns %s: %w", argv[0], nsPath, err)
	}
	defer target.Close()
	cmd := exec.CommandContext(ctx, bin, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio.In, stdio.Out, stdio.Err
	if len(stdio.Env) > 0 {
		cmd.Env = append(os.Environ(), stdio.Env...)
	}
	if err := startIn(target, cmd); err != nil {
		return -1, fmt.Errorf("exec %s in netns %s: %w", argv[0], nsPath, err)
	}
	err = cmd.Wait()
	var xerr *exec.ExitError
	if errors.As(err, &xerr) {
		if ws, ok := xerr.Sys().(unix.WaitStatus); ok && ws.Signaled() {
			if ctx.Err() != nil {
				return 128 + int(ws.Signal()), fmt.Errorf("exec %s: %w", argv[0], ctx.Err())
			}
			return 128 + int(ws.Signal()), nil
		}
		return xerr.ExitCode(), nil
	}
	if err != nil {
		return -1, fmt.Errorf("exec %s: %w", argv[0], err)
	}
	return 0, nil
}

// startIn starts cmd from an OS thread that is in the namespace target: a
// child inherits the namespace of the thread that forks it. The thread is
// handed back to the Go scheduler only if it could be returned to its
// original namespace; otherwise it ends with its goroutine.
func startIn(target vns.NsHandle, cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := vns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("get current netns: %w", err)
			return
		}
		defer orig.Close()
		if err := vns.Set(target); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("enter netns: %w", err)
			return
		}
		err = cmd.Start()
		if vns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}
