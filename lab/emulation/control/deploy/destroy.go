package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/lifecycle"
)

// DestroyOptions tune Destroy and DestroyAll.
type DestroyOptions struct {
	// Only restricts DestroyAll to the labs it accepts, run directories and
	// tagged leftovers alike (nil: every lab on the machine).
	Only func(lab string) bool
	// Images also removes the docker runtime's node images that no
	// container uses any more (docker.Runtime.RemoveUnusedImages).
	Images bool
}

// Destroy removes lab under root: its containers, node processes, links,
// namespaces and run directory, then any tagged leftover (package
// lifecycle) and any container labelled with its name. A lab that does not
// exist is not an error; a lab being deployed is (state.ErrBusy).
func Destroy(ctx context.Context, root, lab string) (lifecycle.Report, error) {
	if err := ctx.Err(); err != nil {
		return lifecycle.Report{}, err
	}
	removed, needDocker, err := prepare(ctx, root, lab)
	if !errors.Is(err, state.ErrBusy) {
		more, cerr := removeLeftoverContainers(ctx, root, func(l string) bool { return l == lab }, needDocker)
		removed = append(removed, more...)
		err = errors.Join(err, cerr)
	} else {
		err = nil // lifecycle.Destroy reports it
	}
	rep, lerr := lifecycle.Destroy(lab, lifecycle.Options{Root: state.RootOr(root), Executables: executables(root, []string{lab})})
	rep.Removed = append(removed, rep.Removed...)
	return rep, errors.Join(err, lerr)
}

// prepare runs the fast teardown of lab, if it has a run directory and
// nobody holds its lock: its containers (which lifecycle cannot remove),
// then its processes and namespaces; lifecycle.Destroy then does the
// books, the sweep and whatever is left. needDocker reports a lab of the
// docker runtime.
func prepare(ctx context.Context, root, lab string) (removed []string, needDocker bool, err error) {
	labs, _ := state.List(state.RootOr(root))
	if !slices.Contains(labs, lab) {
		return nil, false, nil
	}
	l, err := state.Open(state.RootOr(root), lab, false)
	if err != nil {
		if errors.Is(err, state.ErrBusy) {
			return nil, false, err
		}
		return nil, false, nil // lifecycle.Destroy reports it
	}
	defer l.Close()
	// First of all the lab stops being deployed: a command that asks
	// after it from now on (a perf stalled because its nodes are going)
	// hears that the lab is gone, not that its nodes need a restart.
	if err := os.Remove(filepath.Join(l.Dir(), LabFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, false, fmt.Errorf("destroy %s: %w", lab, err)
	}
	needDocker = l.Info("runtime") == "docker"
	if l.Info("runtime") == RuntimeMachines && hasParts(l) {
		// lifecycle cannot reach other machines: package cluster's
		// Destroy asks their agents first.
		return nil, false, fmt.Errorf("destroy %s: %w", lab, ErrSpansMachines)
	}
	removed, err = removeContainers(ctx, l)
	teardown(l, 2*time.Second)
	return removed, needDocker, err
}

// ErrSpansMachines is returned for a lab that spans machines whose parts
// the agents have not removed: package cluster destroys, restarts,
// repairs, runs commands in and captures on such a lab (rocelab does).
var ErrSpansMachines = errors.New("the lab spans machines: its agents must remove its parts first (package cluster; rocelab destroy does)")

// hasParts reports whether l's books still record a machine's part.
func hasParts(l *state.Lab) bool {
	for _, o := range l.Objects() {
		if o.Kind == state.KindPart {
			return true
		}
	}
	return false
}

// DestroyAll destroys every lab under root, and every lab known only by
// the tags of its leftovers (a crashed deploy whose state file is gone),
// containers included.
func DestroyAll(ctx context.Context, root string, o DestroyOptions) (lifecycle.Report, error) {
	if err := ctx.Err(); err != nil {
		return lifecycle.Report{}, err
	}
	only := o.Only
	if only == nil {
		only = func(string) bool { return true }
	}
	labs, _ := state.List(state.RootOr(root))
	var (
		removed    []string
		errs       []error
		needDocker bool
	)
	busy := map[string]bool{}
	for _, lab := range labs {
		if !only(lab) {
			continue
		}
		r, nd, err := prepare(ctx, root, lab)
		removed = append(removed, r...)
		needDocker = needDocker || nd
		if errors.Is(err, state.ErrBusy) {
			busy[lab] = true
			continue
		}
		errs = append(errs, err)
	}
	more, err := removeLeftoverContainers(ctx, root, func(lab string) bool { return only(lab) && !busy[lab] }, needDocker)
	removed = append(removed, more...)
	errs = append(errs, err)
	rep, err := lifecycle.DestroyAll(lifecycle.Options{Root: state.RootOr(root), Only: o.Only, Executables: executables(root, labs)})
	errs = append(errs, err)
	if o.Images {
		imgs, err := removeNodeImages(ctx)
		removed = append(removed, imgs...)
		errs = append(errs, err)
	}
	rep.Removed = append(removed, rep.Removed...)
	return rep, errors.Join(errs...)
}

// executables are the programs whose processes a sweep may stop: this
// program, the binaries the labs' state files name, and the rocelab-node
// beside each (state.NodeExecutable).
func executables(root string, labs []string) []string {
	var exes []string
	add := func(binary string) {
		for _, e := range []string{binary, state.NodeExecutable(binary)} {
			if !slices.Contains(exes, e) {
				exes = append(exes, e)
			}
		}
	}
	if exe, err := os.Executable(); err == nil {
		add(exe)
	}
	for _, lab := range labs {
		if f, err := readState(root, lab); err == nil && f.Info["binary"] != "" {
			add(f.Info["binary"])
		}
	}
	return exes
}

// readState reads a lab's state file without taking its lock (the file is
// replaced atomically, so a reader sees a whole version).
func readState(root, lab string) (state.File, error) {
	var f state.File
	b, err := os.ReadFile(filepath.Join(state.Dir(state.RootOr(root), lab), state.StateFile))
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("state of lab %s: %w", lab, err)
	}
	return f, nil
}

// ErrNoNode is returned by FindNode for a node no lab has.
var ErrNoNode = errors.New("no such node")

// FindNode finds node in lab (or, with lab "", in the only lab that has
// it) under root.
func FindNode(root, lab, node string) (*Lab, *Node, error) {
	labs := []string{lab}
	if lab == "" {
		var err error
		if labs, err = state.List(state.RootOr(root)); err != nil {
			return nil, nil, err
		}
	}
	var found []string
	var fl *Lab
	var fn *Node
	for _, name := range labs {
		l, err := readLab(root, name)
		if err != nil {
			if lab != "" {
				return nil, nil, fmt.Errorf("lab %s: %w (rocelab inspect lists the labs; a Lab made with kubectl: rocelab attach --name %s)", lab, ErrNoLab, lab)
			}
			continue
		}
		for i := range l.Nodes {
			if l.Nodes[i].Name == node {
				found = append(found, name)
				fl, fn = l, &l.Nodes[i]
			}
		}
	}
	switch len(found) {
	case 0:
		if lab != "" {
			return nil, nil, fmt.Errorf("node %s: %w in lab %s", node, ErrNoNode, lab)
		}
		if len(labs) == 0 {
			return nil, nil, fmt.Errorf("node %s: no lab is deployed (rocelab deploy first): %w", node, ErrPickLab)
		}
		return nil, nil, fmt.Errorf("node %s: %w", node, ErrNoNode)
	case 1:
		return fl, fn, nil
	}
	return nil, nil, fmt.Errorf("node %s is in labs %s: %w", node, strings.Join(found, ", "), ErrPickLab)
}
