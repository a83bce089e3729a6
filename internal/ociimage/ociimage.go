// Package ociimage builds small OCI images from files on this machine,
// reproducibly: every file of a layer has the same fixed time, owner
// root:root and its mode, entries are sorted by path with each parent
// directory before them, and the image's creation time is that same fixed
// time, so the same files give the same digest on every build. It writes
// a docker-archive tarball (what `docker load` and `ctr images import`
// both read) and, on request, an OCI image layout. go-containerregistry
// does the manifests and the tarball; no daemon, no registry.
//
// `make image` (cmd/imagegen) builds rocelab's image with it; the
// Kubernetes node under test (deploy/helm) builds its pause image with it.
package ociimage

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Epoch is the time of every file and of the image when Spec.Time is
// zero: 2000-01-01 UTC (tar headers before 1970 are not portable, and a
// zero time reads as "unknown" in some tools).
var Epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// File is one entry of a layer: a regular file (Data, or the contents of
// the file Src on this machine), a directory (Dir) or a symbolic link
// (Link). Path is absolute in the image ("/usr/local/bin/rocelab").
type File struct {
	Path string
	Mode fs.FileMode // permission bits (and sticky); 0644 files, 0755 directories by default
	Data []byte
	Src  string
	Dir  bool
	Link string
}

// Spec is an image: its layers, bottom first, and its configuration.
type Spec struct {
	Layers     [][]File
	Entrypoint []string
	Cmd        []string
	Env        []string
	WorkingDir string
	User       string
	Labels     map[string]string
	// Time of every file and of the image (Epoch when zero).
	Time time.Time
	// OS and Arch of the image's platform (this binary's when "").
	OS, Arch string
}

// Build makes the image of s.
func Build(s Spec) (v1.Image, error) {
	t := s.Time
	if t.IsZero() {
		t = Epoch
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	var adds []mutate.Addendum
	for i, files := range s.Layers {
		b, err := layerTar(files, t)
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(b)), nil
		}, tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		adds = append(adds, mutate.Addendum{Layer: l, MediaType: types.OCILayer,
			History: v1.History{Created: v1.Time{Time: t}, CreatedBy: "rocelab ociimage"}})
	}
	img, err := mutate.Append(img, adds...)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = s.OS, s.Arch
	if cf.OS == "" {
		cf.OS = runtime.GOOS
	}
	if cf.Architecture == "" {
		cf.Architecture = runtime.GOARCH
	}
	cf.Created = v1.Time{Time: t}
	cf.Config.Entrypoint = s.Entrypoint
	cf.Config.Cmd = s.Cmd
	cf.Config.Env = s.Env
	cf.Config.WorkingDir = s.WorkingDir
	cf.Config.User = s.User
	cf.Config.Labels = s.Labels
	return mutate.ConfigFile(img, cf)
}

// layerTar writes files as a tar stream: sorted by path, each missing
// parent directory added (0755), every header at time t, owned by root.
func layerTar(files []File, t time.Time) ([]byte, error) {
	byPath := map[string]File{}
	for _, f := range files {
		p := path.Clean("/" + f.Path)
		if p == "/" {
			return nil, fmt.Errorf("%q: not a file", f.Path)
		}
		if _, dup := byPath[p]; dup {
			return nil, fmt.Errorf("%s twice", p)
		}
		f.Path = p
		byPath[p] = f
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			if _, ok := byPath[d]; !ok {
				byPath[d] = File{Path: d, Dir: true}
			}
		}
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		f := byPath[p]
		h := &tar.Header{Name: strings.TrimPrefix(p, "/"), ModTime: t, Format: tar.FormatPAX}
		mode := f.Mode
		switch {
		case f.Dir:
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
			if mode == 0 {
				mode = 0o755
			}
		case f.Link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, f.Link
			mode = 0o777
		default:
			h.Typeflag = tar.TypeReg
			if mode == 0 {
				mode = 0o644
			}
			if f.Src != "" {
				b, err := os.ReadFile(f.Src)
				if err != nil {
					return nil, err
				}
				f.Data = b
			}
			h.Size = int64(len(f.Data))
		}
		h.Mode = int64(mode.Perm())
		if mode&fs.ModeSticky != 0 {
			h.Mode |= 0o1000
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(f.Data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteArchive writes img tagged ref ("rocelab:v1") as a docker-archive
// tarball at file: `docker load -i`, `ctr -n k8s.io images import`.
func WriteArchive(file, ref string, img v1.Image) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	tmp := file + ".tmp"
	if err := tarball.WriteToFile(tmp, tag, img); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, file)
}

// WriteLayout writes img tagged ref into an OCI image layout at dir,
// which must not exist yet (`skopeo copy oci:DIR …`, `ctr import` of its tar).
func WriteLayout(dir, ref string, img v1.Image) error {
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s exists", dir)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": ref,
	}))
}
