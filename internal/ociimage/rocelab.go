package ociimage

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Programs are the binaries of rocelab's image, from `make build`'s bin/,
// installed as `make install` does (/usr/local/bin), so that rocelab finds
// rocelab-node beside it and the verbs library in ../lib/rocelab.
var Programs = []string{"rocelab", "rocelab-node", "rocelab-controller"}

// VerbsLibs are rocelab's verbs libraries (bin/lib), in the image at
// /usr/local/lib/rocelab: the agent copies them into each lab it deploys
// for the verbs programs run there.
var VerbsLibs = []string{"libibverbs.so.1", "librdmacm.so.1"}

// ErrNoVerbsLib says that bin/lib lacked a verbs library (make build skips
// it without gcc and the verbs headers): the image is built without it.
var ErrNoVerbsLib = errors.New("verbs library not built")

// Rocelab is the spec of rocelab's image from bin (make build's output),
// labelled with version. Its root file system is a distroless-like base
// made here, not pulled: /etc/passwd and /etc/group (root, and nonroot
// 65532 for the controller), nsswitch.conf, /tmp; then the three static
// Go programs and the verbs libraries. No libc: nothing in the image links
// it (Rocelab refuses a dynamically linked program). The libraries do, but
// are never loaded in the image: the agent copies them into a lab's
// directory on the machine, where the verbs programs that load them bring
// their own libc. When bin/lib lacks them the spec is still returned,
// with an error wrapping ErrNoVerbsLib.
func Rocelab(bin, version string) (Spec, error) {
	base := []File{
		{Path: "/etc/passwd", Data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{Path: "/etc/group", Data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{Path: "/etc/nsswitch.conf", Data: []byte("hosts: files dns\n")},
		{Path: "/root", Dir: true, Mode: 0o700},
		{Path: "/home/nonroot", Dir: true, Mode: 0o700},
		{Path: "/tmp", Dir: true, Mode: 0o777 | fs.ModeSticky},
		{Path: "/run", Dir: true},
		{Path: "/var/run", Link: "../run"},
	}
	var progs []File
	for _, p := range Programs {
		src := filepath.Join(bin, p)
		if err := static(src); err != nil {
			return Spec{}, err
		}
		progs = append(progs, File{Path: "/usr/local/bin/" + p, Src: src, Mode: 0o755})
	}
	var missing []string
	for _, l := range VerbsLibs {
		src := filepath.Join(bin, "lib", l)
		if _, err := os.Stat(src); err != nil {
			missing = append(missing, src)
			continue
		}
		progs = append(progs, File{Path: "/usr/local/lib/rocelab/" + l, Src: src, Mode: 0o755})
	}
	s := Spec{
		Layers: [][]File{base, progs},
		Env:    []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		Cmd:    []string{"/usr/local/bin/rocelab"},
		Labels: map[string]string{
			"org.opencontainers.image.title":       "rocelab",
			"org.opencontainers.image.description": "rocelab, rocelab-node, rocelab-controller and rocelab's verbs libraries",
			"org.opencontainers.image.version":     version,
		},
	}
	if len(missing) > 0 {
		return s, fmt.Errorf("%w: %v (install gcc, libibverbs-dev and librdmacm-dev, then make build)", ErrNoVerbsLib, missing)
	}
	return s, nil
}

// static fails unless file is an ELF program with no interpreter: the
// image has no libc or dynamic loader to run anything else.
func static(file string) error {
	f, err := elf.Open(file)
	if err != nil {
		return fmt.Errorf("%s: %w (make build first)", file, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked: the image has no libc (build with CGO_ENABLED=0, as make build does)", file)
		}
	}
	return nil
}
