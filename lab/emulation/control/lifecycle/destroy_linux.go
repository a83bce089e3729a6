package lifecycle

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/datapath/links"
)

// Options tune Destroy and DestroyAll.
type Options struct {
	// Root is the state root (state.DefaultRoot if "").
	Root string
	// Grace is how long a node process gets between SIGTERM and SIGKILL
	// (2 s if 0).
	Grace time.Duration
	// Only, if set, restricts DestroyAll to the labs it accepts (tests
	// use it to stay clear of labs that are not theirs).
	Only func(lab string) bool
	// Executables are the programs that run node processes. A sweep stops
	// the processes that run one of them inside a lab namespace it
	// removes (processes known only from the namespace, their state file
	// lost). Default: this program (os.Executable) and the rocelab-node
	// beside it (state.NodeExecutable).
	Executables []string
}

func (o Options) executables() []string {
	if o.Executables != nil {
		return o.Executables
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	if node := state.NodeExecutable(exe); node != exe {
		return []string{exe, node}
	}
	return []string{exe}
}

func (o Options) root() string {
	if o.Root == "" {
		return state.DefaultRoot
	}
	return o.Root
}

func (o Options) grace() time.Duration {
	if o.Grace == 0 {
		return 2 * time.Second
	}
	return o.Grace
}

// Report lists what Destroy and DestroyAll removed.
type Report struct {
	Labs    []string `json:"labs"`
	Removed []string `json:"removed"`
	// Covered lists the lab's namespaces another tool's mount over
	// /run/netns hides (netns.ErrCovered): destroy stopped everything in
	// them and forgot them, but their files stay until that mount goes.
	Covered []string `json:"covered,omitempty"`
}

// Rollback removes every object recorded in l, newest first, and forgets
// the ones that are gone. Objects that no longer exist count as removed,
// so Rollback is idempotent; it goes on after an error and returns them
// all joined. The removed objects are forgotten in one write of the state
// file at the end (one write per object made destroying a lab of 1,000
// links cost seconds): a crash before it leaves them recorded, and the
// next rollback finds them gone.
func Rollback(l *state.Lab, grace time.Duration) error {
	_, _, err := rollback(l, grace)
	return err
}

// rollback removes l's objects; covered lists its namespaces that another
// mount hides (netns.ErrCovered), forgotten but not removable now.
func rollback(l *state.Lab, grace time.Duration) (removed, covered []string, err error) {
	objs := l.Objects()
	var errs []error
	var gone []int
	for i := len(objs) - 1; i >= 0; i-- {
		o := objs[i]
		if err := remove(o, grace); err != nil {
			if errors.Is(err, netns.ErrCovered) {
				covered = append(covered, o.Name)
				gone = append(gone, o.ID)
				continue
			}
			errs = append(errs, err)
			continue
		}
		removed = append(removed, describe(o))
		gone = append(gone, o.ID)
	}
	if err := l.ForgetAll(gone); err != nil {
		errs = append(errs, err)
	}
	return removed, covered, errors.Join(errs...)
}

func describe(o state.Object) string {
	switch o.Kind {
	case state.KindProcess:
		return fmt.Sprintf("process %d (%s)", o.PID, o.Node)
	case state.KindVeth, state.KindLink:
		return fmt.Sprintf("%s %s in %q", o.Kind, o.Name, o.NetNS)
	}
	return fmt.Sprintf("%s %s", o.Kind, o.Name)
}

func remove(o state.Object, grace time.Duration) error {
	switch o.Kind {
	case state.KindProcess:
		if o.PID != 0 {
			return proc.Process{PID: o.PID, StartTime: o.StartTime}.Stop(grace)
		}
		// Recorded as an intent only: find it in its namespace by executable.
		return stopStrays(o.NetNS, []string{o.Name}, grace)
	case state.KindNetns:
		return netns.Delete(o.Name)
	case state.KindVeth:
		return errors.Join(links.Delete(o.NetNS, o.Name), links.Delete(o.PeerNetNS, o.Peer))
	case state.KindLink:
		return links.Delete(o.NetNS, o.Name)
	case state.KindContainer:
		return fmt.Errorf("remove container %s: no container runtime is wired in yet", o.Name)
	case state.KindPart:
		// Its agent removes it: deploy.Destroy asks it first.
		return fmt.Errorf("remove the part on machine %s: its agent %s did not remove it", o.Name, o.Agent)
	}
	return fmt.Errorf("remove %s %s: unknown kind", o.Kind, o.Name)
}

// stopStrays stops the processes inside namespace ns whose executable is
// one of exes. It does nothing without a namespace or executable to go by.
func stopStrays(ns string, exes []string, grace time.Duration) error {
	if ns == "" || len(exes) == 0 || exes[0] == "" {
		return nil
	}
	var errs []error
	for _, p := range netns.Processes(ns, exes) {
		errs = append(errs, p.Stop(grace))
	}
	return errors.Join(errs...)
}

// Destroy removes lab: every object its state file records, then any
// tagged leftover (see the package comment), then its run directory. A lab
// that does not exist is not an error. It fails with state.ErrBusy if
// another process holds the lab's lock (a deploy in progress).
func Destroy(lab string, o Options) (Report, error) {
	rep := Report{Labs: []string{lab}}
	if err := state.ValidName(lab); err != nil {
		return rep, err
	}
	labs, err := state.List(o.root())
	if err != nil {
		return rep, err
	}
	var l *state.Lab
	if slices.Contains(labs, lab) {
		if l, err = state.Open(o.root(), lab, false); err != nil {
			return rep, fmt.Errorf("destroy lab %s: %w", lab, err)
		}
		removed, covered, err := rollback(l, o.grace())
		rep.Removed = append(rep.Removed, removed...)
		rep.Covered = append(rep.Covered, covered...)
		if err != nil {
			l.Close()
			return rep, fmt.Errorf("destroy lab %s: %w", lab, err)
		}
	}
	// Sweep while holding the lock, so no deploy of lab runs meanwhile.
	removed, err := sweep(func(l string) bool { return l == lab }, o)
	rep.Removed = append(rep.Removed, removed...)
	if l != nil {
		if err != nil {
			l.Close()
		} else {
			err = l.Remove()
		}
	}
	if err != nil {
		return rep, fmt.Errorf("destroy lab %s: %w", lab, err)
	}
	return rep, nil
}

// DestroyAll destroys every lab: those with a run directory under the
// state root, and those known only by the tags of their leftovers. A lab
// whose lock is held by another process is skipped with an error
// (state.ErrBusy), its objects untouched.
func DestroyAll(o Options) (Report, error) {
	only := o.Only
	if only == nil {
		only = func(string) bool { return true }
	}
	var rep Report
	labs, err := state.List(o.root())
	if err != nil {
		return rep, err
	}
	var errs []error
	busy := map[string]bool{}
	for _, lab := range labs {
		if !only(lab) {
			continue
		}
		r, err := Destroy(lab, o)
		rep.Labs = append(rep.Labs, lab)
		rep.Removed = append(rep.Removed, r.Removed...)
		rep.Covered = append(rep.Covered, r.Covered...)
		if errors.Is(err, state.ErrBusy) {
			busy[lab] = true
		}
		errs = append(errs, err)
	}
	removed, err := sweep(func(lab string) bool {
		if !only(lab) || busy[lab] {
			return false
		}
		if !slices.Contains(rep.Labs, lab) {
			rep.Labs = append(rep.Labs, lab)
		}
		return true
	}, o)
	rep.Removed = append(rep.Removed, removed...)
	errs = append(errs, err)
	return rep, errors.Join(errs...)
}

// sweep removes the tagged namespaces (after stopping the node processes
// inside them) and root-namespace interfaces of the labs match accepts.
func sweep(match func(lab string) bool, o Options) ([]string, error) {
	var removed []string
	var errs []error
	names, err := netns.List()
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if !strings.HasPrefix(name, state.NetnsPrefix) {
			continue
		}
		lab, node, ok := netns.Tag(name)
		if !ok || !match(lab) || state.NetnsName(lab, node) != name {
			continue
		}
		if err := stopStrays(name, o.executables(), o.grace()); err != nil {
			errs = append(errs, err)
		}
		if err := netns.Delete(name); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, "netns "+name)
	}
	tagged, err := links.ListTagged("", func(alias string) bool {
		lab, _, _, ok := state.ParseAlias(alias)
		return ok && match(lab)
	})
	if err != nil {
		errs = append(errs, err)
	}
	for _, t := range tagged {
		if err := links.Delete("", t.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, "link "+t.Name)
	}
	return removed, errors.Join(errs...)
}
