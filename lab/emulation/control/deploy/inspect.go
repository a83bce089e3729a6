package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
)

// LabStatus is one lab as Inspect sees it.
type LabStatus struct {
	Name string `json:"name"`
	// Status: "running" (every node process answers /health), "degraded"
	// (some do not), "incomplete" (a deploy in progress or crashed: no
	// LabFile; destroy cleans it up).
	Status  string `json:"status"`
	Objects int    `json:"objects"`
	// Behind names the nodes whose loop is behind the lab's dilated clock
	// now (alive, so the status stays running): what the lab measures now
	// is not the fabric's.
	Behind []string `json:"behind,omitempty"`
	// Unreachable are the machines whose agent cannot be asked about
	// their nodes (a lab that spans machines), and why: the lab is not
	// known to be whole, and inspect exits 1.
	Unreachable []Problem `json:"unreachable,omitempty"`
	*Lab
}

// Inspect lists the labs under root (only lab, if not ""), with each node
// process's health.
func Inspect(ctx context.Context, root, lab string) ([]LabStatus, error) {
	labs := []string{lab}
	if lab == "" {
		var err error
		if labs, err = state.List(state.RootOr(root)); err != nil {
			return nil, err
		}
	}
	var out []LabStatus
	for _, name := range labs {
		f, err := readState(root, name)
		if errors.Is(err, os.ErrNotExist) && lab != "" {
			return nil, fmt.Errorf("lab %s: %w (a Lab made with kubectl: rocelab attach --name %s)", lab, ErrNoLab, lab)
		}
		st := LabStatus{Name: name, Status: "incomplete", Objects: len(f.Objects)}
		l, err := readLab(root, name)
		if err == nil {
			st.Lab = l
			st.Status = "running"
			health(ctx, l)
			userHealth(ctx, l)
			st.Unreachable = unreachable(l)
			for _, n := range l.Nodes {
				switch {
				case !n.Alive():
					st.Status = "degraded"
				case n.Health == HealthBehind:
					st.Behind = append(st.Behind, n.Name)
				}
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// health fills each node's Health: "ok", "-" (no process) or what is
// wrong with its process.
func health(ctx context.Context, l *Lab) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	sem := make(chan struct{}, 16)
	for i := range l.Nodes {
		n := &l.Nodes[i]
		if n.Socket == "" {
			n.Health = "-"
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			h := "ok"
			why, behind := nodeAlive(ctx, l, n, 2*time.Second)
			switch {
			case why != "":
				h = why
			case behind != "":
				h = HealthBehind
			}
			mu.Lock()
			n.Health, n.BehindDetail = h, behind
			mu.Unlock()
		})
	}
	wg.Wait()
}

// ErrPickLab is returned by OnlyLab when no lab, or more than one, is
// deployed and none was named.
var ErrPickLab = errors.New("pick one with --name")

// OnlyLab inspects the lab named lab, or the one deployed lab when lab is
// "": the lab every command that acts on "the lab" works on. With no lab or
// several labs deployed and none named it fails with ErrPickLab.
func OnlyLab(ctx context.Context, root, lab string) (LabStatus, error) {
	l, err := PickLab(root, lab)
	if err != nil {
		return LabStatus{}, err
	}
	labs, err := Inspect(ctx, root, l.Name)
	if err != nil {
		return LabStatus{}, err
	}
	if len(labs) != 1 || labs[0].Lab == nil {
		return LabStatus{}, fmt.Errorf("lab %s: %w", l.Name, ErrNoLab)
	}
	return labs[0], nil
}

// processOf is n's node process.
func processOf(n *Node) proc.Process { return proc.Process{PID: n.PID, StartTime: n.StartTime} }
