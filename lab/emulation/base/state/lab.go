package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// ErrBusy is returned by Open when another process holds the lab's lock.
var ErrBusy = errors.New("lab is locked by another process")

// Lab is an open, locked lab state. It is not safe for concurrent use by
// several goroutines; one CLI call owns it until Close.
type Lab struct {
	root, name string
	unlock     func() error
	f          File
}

// Open locks lab's run directory under root, creating it (0700) and an
// empty state file if needed, and loads the state. It fails with ErrBusy
// if another process holds the lock, unless wait is true, in which case it
// blocks until the lock is free.
func Open(root, lab string, wait bool) (*Lab, error) {
	if err := ValidName(lab); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("open lab %s: %w", lab, err)
	}
	dir := Dir(root, lab)
	var unlock func() error
	var err error
	for range 3 { // a concurrent Remove may delete dir between Mkdir and the lock
		if err = os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("open lab %s: %w", lab, err)
		}
		unlock, err = lockFile(filepath.Join(dir, LockFile), wait)
		if !errors.Is(err, os.ErrNotExist) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open lab %s: %w", lab, err)
	}
	l := &Lab{root: root, name: lab, unlock: unlock}
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		l.f = File{Lab: lab, Created: time.Now().UTC(), NextID: 1}
		err = l.save()
	case err == nil:
		err = json.Unmarshal(b, &l.f)
		if err == nil && l.f.Lab != lab {
			err = fmt.Errorf("state file names lab %q", l.f.Lab)
		}
	}
	if err != nil {
		unlock()
		return nil, fmt.Errorf("open lab %s: %w", lab, err)
	}
	return l, nil
}

// Name is the lab's name.
func (l *Lab) Name() string { return l.name }

// Dir is the lab's run directory.
func (l *Lab) Dir() string { return Dir(l.root, l.name) }

// Objects returns a copy of the recorded objects, in record order.
func (l *Lab) Objects() []Object { return slices.Clone(l.f.Objects) }

// Info returns the value stored under key.
func (l *Lab) Info(key string) string { return l.f.Info[key] }

// SetInfo stores a small fact in the state file.
func (l *Lab) SetInfo(key, value string) error {
	if l.f.Info == nil {
		l.f.Info = map[string]string{}
	}
	l.f.Info[key] = value
	return l.save()
}

// Intend records o (with Status Intent and a fresh ID) and writes the
// state file, before the caller creates the object. It returns the ID.
func (l *Lab) Intend(o Object) (int, error) {
	ids, err := l.IntendAll([]Object{o})
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// IntendAll records every object of objs as Intend does, with one write
// of the state file for them all (a step of a deploy records its whole
// batch before creating any of it). It returns their IDs, in order.
func (l *Lab) IntendAll(objs []Object) ([]int, error) {
	if len(objs) == 0 {
		return nil, nil
	}
	n, next := len(l.f.Objects), l.f.NextID
	now := time.Now().UTC()
	ids := make([]int, len(objs))
	for i, o := range objs {
		o.ID = l.f.NextID
		l.f.NextID++
		o.Status = Intent
		o.Time = now
		l.f.Objects = append(l.f.Objects, o)
		ids[i] = o.ID
	}
	if err := l.save(); err != nil {
		l.f.Objects, l.f.NextID = l.f.Objects[:n], next
		return nil, err
	}
	return ids, nil
}

// Created marks object id as created. update, if not nil, may fill in what
// is known only now (a process's PID and start time).
func (l *Lab) Created(id int, update func(*Object)) error {
	return l.CreatedAll([]int{id}, func(_ int, o *Object) {
		if update != nil {
			update(o)
		}
	})
}

// CreatedAll marks the objects ids as created, with one write of the state
// file. update, if not nil, is called with the index into ids and the
// object, as Created's is.
func (l *Lab) CreatedAll(ids []int, update func(i int, o *Object)) error {
	if len(ids) == 0 {
		return nil
	}
	old := slices.Clone(l.f.Objects)
	at := make(map[int]int, len(l.f.Objects))
	for j, o := range l.f.Objects {
		at[o.ID] = j
	}
	for i, id := range ids {
		j, ok := at[id]
		if !ok {
			l.f.Objects = old
			return fmt.Errorf("lab %s: no object %d", l.name, id)
		}
		o := l.f.Objects[j]
		if update != nil {
			update(i, &o)
			o.ID = id
		}
		o.Status = Created
		l.f.Objects[j] = o
	}
	if err := l.save(); err != nil {
		l.f.Objects = old
		return err
	}
	return nil
}

// Forget drops object id after it was removed. Forgetting an unknown ID
// is not an error.
func (l *Lab) Forget(id int) error { return l.ForgetAll([]int{id}) }

// ForgetAll drops the objects ids after they were removed, with one write
// of the state file. Unknown IDs are ignored.
func (l *Lab) ForgetAll(ids []int) error {
	drop := make(map[int]bool, len(ids))
	for _, id := range ids {
		drop[id] = true
	}
	n := len(l.f.Objects)
	kept := slices.DeleteFunc(slices.Clone(l.f.Objects), func(o Object) bool { return drop[o.ID] })
	if len(kept) == n {
		return nil
	}
	old := l.f.Objects
	l.f.Objects = kept
	if err := l.save(); err != nil {
		l.f.Objects = old
		return err
	}
	return nil
}

// Remove deletes the run directory (state file, lock and anything else in
// it) and releases the lock. The caller removes the objects first. The Lab
// is closed afterwards.
func (l *Lab) Remove() error {
	err := os.RemoveAll(l.Dir())
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("remove lab %s: %w", l.name, err)
	}
	return nil
}

// Close releases the lock. It is safe to call more than once.
func (l *Lab) Close() error {
	if l.unlock == nil {
		return nil
	}
	u := l.unlock
	l.unlock = nil
	return u()
}

func (l *Lab) save() error {
	if l.unlock == nil {
		return fmt.Errorf("lab %s: state is closed", l.name)
	}
	b, err := json.MarshalIndent(&l.f, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state of lab %s: %w", l.name, err)
	}
	if err := writeAtomic(filepath.Join(l.Dir(), StateFile), append(b, '\n')); err != nil {
		return fmt.Errorf("write state of lab %s: %w", l.name, err)
	}
	return nil
}
