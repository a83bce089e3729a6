package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// A report directory is all or nothing: Clear removes a previous run's
// report when a run starts, so a run that fails before its report is
// written leaves no older PASS behind it; Write fills a new directory
// beside dir and renames it into place, so a reader (a CI job's artefacts,
// a replay) finds no report or this run's whole, never half of one.

// reportNames are the entries a report directory holds.
var reportNames = []string{"plots", "metrics.csv", "metrics.json", LayoutFile, TimelineFile, "junit.xml", "summary.md"}

// Clear removes the report in dir, if there is one. A directory that holds
// anything else is refused: it is not rocelab's to empty.
func Clear(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("report %s: %w", dir, err)
	}
	for _, e := range ents {
		if !slices.Contains(reportNames, e.Name()) {
			return fmt.Errorf("report %s: the directory holds %s, which is not part of a report: pick an empty or new directory", dir, e.Name())
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("report %s: remove the previous report: %w", dir, err)
	}
	return nil
}

// writeAtomic makes dir with fill: fill writes into a new sibling
// directory, which replaces dir once it is complete. On failure nothing is
// left: not the half-written one, nor (since it no longer describes the
// latest run) an older report in dir.
func writeAtomic(dir string, fill func(tmp string) error) error {
	dir = filepath.Clean(dir)
	if err := Clear(dir); err != nil {
		return err
	}
	parent, base := filepath.Split(dir)
	if parent == "" {
		parent = "."
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("report %s: %w", dir, err)
	}
	tmp := filepath.Join(parent, fmt.Sprintf(".%s.new-%d-%d", base, os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(tmp, 0o755); err != nil { // the umask applies, as to any directory
		return fmt.Errorf("report %s: %w", dir, err)
	}
	if err := fill(tmp); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("report %s: %w", dir, err)
	}
	return nil
}
