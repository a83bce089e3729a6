package hostfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// Enter moves the calling thread into a mount namespace of its own whose
// /sys is the sysfs of the thread's network namespace (as `ip netns exec`
// gives it), whose /dev and /sys/class also hold devs' files, and whose
// /etc/hosts also names the lab's hosts (when there are any and the machine
// has an /etc/hosts), so that a program may name its peer "host4". Call it
// on a locked OS thread that is thrown away afterwards (it no longer shares
// the process's mount namespace), after entering the network namespace,
// and start the program from it: the program inherits the view.
func Enter(devs []Device, hosts ...HostName) error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("hostfs: a mount namespace of its own: %w", err)
	}
	// Nothing done here reaches the machine's mounts.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("hostfs: make / private: %w", err)
	}
	if err := unix.Unmount("/sys", unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("hostfs: unmount /sys: %w", err)
	}
	if err := unix.Mount("sysfs", "/sys", "sysfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("hostfs: mount the namespace's sysfs: %w", err)
	}
	// A program under rocelab exec that runs rocelab exec again (an MPI
	// launcher's agent) has the lab's entries already: they are made
	// anew, not bound back.
	if err := cover("/dev", []string{"infiniband"}, func(dir string) error { return addDevices(dir, devs) }); err != nil {
		return err
	}
	if err := addHosts(hosts); err != nil {
		return err
	}
	return cover("/sys/class", []string{"infiniband", "infiniband_verbs"}, func(dir string) error {
		for _, f := range sysFiles(devs) {
			p := filepath.Join(dir, f.path)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(f.text+"\n"), 0o444); err != nil {
				return err
			}
		}
		return nil
	})
}

// addDevices makes dir/infiniband/uverbsN for devs.
func addDevices(dir string, devs []Device) error {
	ib := filepath.Join(dir, "infiniband")
	if err := os.MkdirAll(ib, 0o755); err != nil {
		return err
	}
	for _, d := range devs {
		dev := unix.Mkdev(UverbsMajor, uint32(UverbsMinorBase+d.Index))
		p := filepath.Join(ib, fmt.Sprintf("uverbs%d", d.Index))
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(dev)); err != nil {
			return fmt.Errorf("uverbs%d: %w", d.Index, err)
		}
		// Readable and writable by all, as udev's rules make them.
		if err := os.Chmod(p, 0o666); err != nil {
			return err
		}
	}
	return nil
}

// cover mounts a tmpfs over dir that holds every entry dir held but those
// named in own — each bound back from the covered directory (directories
// with the mounts under them), symbolic links copied — and whatever add
// makes in it.
func cover(dir string, own []string, add func(dir string) error) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("hostfs: cover %s: %w", dir, err)
	}
	orig, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("hostfs: cover %s: %w", dir, err)
	}
	defer unix.Close(orig)
	if err := unix.Mount("rocelab-hostfs", dir, "tmpfs", unix.MS_NOSUID, "mode=755"); err != nil {
		return fmt.Errorf("hostfs: cover %s: %w", dir, err)
	}
	for _, e := range ents {
		if slices.Contains(own, e.Name()) {
			continue
		}
		if err := bindBack(orig, dir, e); err != nil {
			return fmt.Errorf("hostfs: cover %s: %s: %w", dir, e.Name(), err)
		}
	}
	if err := add(dir); err != nil {
		return fmt.Errorf("hostfs: %s: %w", dir, err)
	}
	return nil
}

// bindBack puts entry e of the covered directory (open as orig) into dir.
func bindBack(orig int, dir string, e os.DirEntry) error {
	src := fmt.Sprintf("/proc/self/fd/%d/%s", orig, e.Name())
	dst := filepath.Join(dir, e.Name())
	switch {
	case e.Type()&os.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case e.IsDir():
		if err := os.Mkdir(dst, 0o755); err != nil {
			return err
		}
		return unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, "")
	default:
		f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		f.Close()
		return unix.Mount(src, dst, "", unix.MS_BIND, "")
	}
}

// addHosts binds, over /etc/hosts, the machine's file followed by a line
// per lab host. The file is made in the tmpfs that covers /dev in this
// namespace (nothing is written to the machine) and unlinked there once
// bound.
func addHosts(hosts []HostName) error {
	if len(hosts) == 0 {
		return nil
	}
	orig, err := os.ReadFile("/etc/hosts")
	if err != nil {
		return nil // no file to cover; the programs name peers by address
	}
	// Entered from inside a view (rocelab exec under rocelab exec): its
	// file is bound there already, from a file since unlinked; the
	// machine's is under it.
	if bytes.Contains(orig, []byte(hostsMarker)) {
		if err := unix.Unmount("/etc/hosts", unix.MNT_DETACH); err != nil {
			return fmt.Errorf("hostfs: unbind /etc/hosts: %w", err)
		}
		if orig, err = os.ReadFile("/etc/hosts"); err != nil {
			return nil
		}
	}
	tmp := "/dev/.rocelab-hosts"
	if err := os.WriteFile(tmp, hostsFile(orig, hosts), 0o644); err != nil {
		return fmt.Errorf("hostfs: /etc/hosts: %w", err)
	}
	defer os.Remove(tmp)
	if err := unix.Mount(tmp, "/etc/hosts", "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("hostfs: bind /etc/hosts: %w", err)
	}
	return nil
}
