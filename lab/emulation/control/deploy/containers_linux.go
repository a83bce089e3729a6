package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/docker"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
)

// removeTimeout bounds the removal of one lab's containers.
const removeTimeout = 60 * time.Second

// removeContainers removes the containers l records, in parallel, and
// forgets each one that is gone (package lifecycle cannot remove
// containers: it knows no container runtime). The containers' named
// namespaces stay recorded, for lifecycle to unmount.
func removeContainers(ctx context.Context, l *state.Lab) ([]string, error) {
	var objs []state.Object
	for _, o := range l.Objects() {
		if o.Kind == state.KindContainer {
			objs = append(objs, o)
		}
	}
	if len(objs) == 0 {
		return nil, nil
	}
	rt, err := docker.New(docker.Options{})
	if err != nil {
		return nil, err
	}
	defer rt.Close()
	ctx, cancel := context.WithTimeout(ctx, removeTimeout)
	defer cancel()
	// A node's containers (a user container and its sidecar) go one after
	// the other, the last recorded first; nodes go in parallel.
	errs := make([]error, len(objs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, group := range byNode(len(objs), func(i int) string { return objs[i].Node }) {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			for _, i := range slices.Backward(group) {
				o := objs[i]
				releaseFIFO(filepath.Join(l.Dir(), o.Node+".json"))
				errs[i] = rt.Remove(ctx, sandbox.Ref{Runtime: docker.Name, Lab: l.Name(), Node: o.Node, ID: o.Name})
			}
		})
	}
	wg.Wait()
	var removed []string
	for i, o := range objs {
		if errs[i] == nil {
			removed = append(removed, "container "+o.Name)
			errs[i] = l.Forget(o.ID)
		}
	}
	return removed, errors.Join(errs...)
}

// dockerEngine returns a docker runtime if an engine is configured on this
// machine (DOCKER_HOST, or the default socket exists) and answers; nil
// (and no error) when there is none.
func dockerEngine(ctx context.Context) (*docker.Runtime, error) {
	if os.Getenv("DOCKER_HOST") == "" {
		if _, err := os.Stat("/var/run/docker.sock"); err != nil {
			return nil, nil
		}
	}
	rt, err := docker.New(docker.Options{})
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rt.Ping(pctx); err != nil {
		rt.Close()
		return nil, err
	}
	return rt, nil
}

// removeLeftoverContainers removes the containers labelled with a lab that
// match accepts, whether or not a state file records them (a crashed
// deploy), and returns what it removed. Without a Docker engine it does
// nothing, unless required (a lab that records containers), when the
// engine's absence is the error.
func removeLeftoverContainers(ctx context.Context, root string, match func(lab string) bool, required bool) ([]string, error) {
	rt, err := dockerEngine(ctx)
	if rt == nil {
		if required {
			if err == nil {
				err = errors.New("no Docker engine")
			}
			return nil, fmt.Errorf("remove containers: %w", err)
		}
		return nil, nil
	}
	defer rt.Close()
	ctx, cancel := context.WithTimeout(ctx, removeTimeout)
	defer cancel()
	refs, err := rt.Leftovers(ctx, "")
	if err != nil {
		return nil, err
	}
	refs = slices.DeleteFunc(refs, func(r sandbox.Ref) bool { return !match(r.Lab) })
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		errs    []error
		removed []string
	)
	sem := make(chan struct{}, 16)
	// A node's containers go one after the other (removing a user
	// container removes its sidecar first), nodes in parallel.
	for _, group := range byNode(len(refs), func(i int) string { return refs[i].Lab + "\x00" + refs[i].Node }) {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			for _, i := range group {
				ref := refs[i]
				if state.ValidName(ref.Lab) == nil {
					releaseFIFO(filepath.Join(state.Dir(state.RootOr(root), ref.Lab), ref.Node+".json"))
				}
				err := rt.Remove(ctx, ref)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					removed = append(removed, "container "+ref.ID[:min(12, len(ref.ID))]+" of "+ref.Lab+"/"+ref.Node)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(removed)
	return removed, errors.Join(errs...)
}

// removeNodeImages removes the node images no container uses, if a Docker
// engine answers (none: nothing to do).
func removeNodeImages(ctx context.Context) ([]string, error) {
	rt, err := dockerEngine(ctx)
	if rt == nil {
		return nil, err
	}
	defer rt.Close()
	refs, err := rt.RemoveUnusedImages(ctx, nil)
	for i, r := range refs {
		refs[i] = "image " + r
	}
	return refs, err
}
