package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"
)

// BinaryPath is where the rocelab binary is in the node image: the first
// element of a docker node's Argv.
const BinaryPath = "/rocelab"

// ImageRepo is the repository of node images; the tag is a content hash.
const ImageRepo = "rocelab/node"

// dockerfile is the whole recipe of the node image.
const dockerfile = "FROM scratch\nCOPY rocelab " + BinaryPath + "\nENTRYPOINT []\nCMD [\"" + BinaryPath + "\"]\n"

// contextVersion changes when the build context's layout changes.
const contextVersion = "rocelab-node-image/1\n"

// CheckStatic returns nil if path is an ELF executable with no program
// interpreter (statically linked), and otherwise an error that tells how
// to build one.
func CheckStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("node image binary %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			interp, _ := io.ReadAll(io.LimitReader(p.Open(), 256))
			return fmt.Errorf("node image binary %s is dynamically linked (interpreter %s); the docker runtime needs a static one: "+
				"build it with `CGO_ENABLED=0 go build -o rocelab ./cmd/rocelab` and run that binary",
				path, bytes.TrimRight(interp, "\x00"))
		}
	}
	return nil
}

// Image is a node image.
type Image struct {
	// Ref is "rocelab/node:<hash>".
	Ref string
	// Hash is the full content hash (hex) of the build context.
	Hash string
	// Built is true when EnsureImage built it, false when it existed.
	Built bool
}

// imageHash is the content hash of the build context made of binarySum:
// the first 16 hex digits name the image.
func imageHash(binarySum []byte) string {
	h := sha256.New()
	io.WriteString(h, contextVersion)
	io.WriteString(h, dockerfile)
	h.Write(binarySum)
	return hex.EncodeToString(h.Sum(nil))
}

func imageRef(hash string) string { return ImageRepo + ":" + hash[:16] }

// fileSum returns the SHA-256 and the size of the file at path.
func fileSum(path string) ([]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return nil, 0, err
	}
	return h.Sum(nil), n, nil
}

// writeContext writes the build context (Dockerfile, rocelab) to w as a
// tar with fixed metadata. It fails if the binary's content is not the
// one that sum and size describe (it changed since it was hashed).
func writeContext(w io.Writer, binary string, sum []byte, size int64) error {
	f, err := os.Open(binary)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(w)
	mtime := time.Unix(0, 0)
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile)), ModTime: mtime, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := io.WriteString(tw, dockerfile); err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: "rocelab", Mode: 0o755, Size: size, ModTime: mtime, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.CopyN(tw, io.TeeReader(f, h), size); err != nil {
		return fmt.Errorf("copy %s: %w", binary, err)
	}
	if !bytes.Equal(h.Sum(nil), sum) {
		return fmt.Errorf("%s changed while the image was built", binary)
	}
	return tw.Close()
}

// ensureImage builds the node image of binary unless an image with its
// content hash exists already.
func ensureImage(ctx context.Context, c client.APIClient, binary string) (Image, error) {
	if err := CheckStatic(binary); err != nil {
		return Image{}, err
	}
	sum, size, err := fileSum(binary)
	if err != nil {
		return Image{}, fmt.Errorf("hash node image binary: %w", err)
	}
	hash := imageHash(sum)
	img := Image{Ref: imageRef(hash), Hash: hash}
	if ins, err := c.ImageInspect(ctx, img.Ref); err == nil && ins.Config != nil && ins.Config.Labels[LabelImage] == hash {
		return img, nil
	} else if err != nil && !client.IsErrNotFound(err) {
		return Image{}, fmt.Errorf("inspect image %s: %w", img.Ref, err)
	}

	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeContext(pw, binary, sum, size)) }()
	defer pr.Close()
	resp, err := c.ImageBuild(ctx, pr, build.ImageBuildOptions{
		Tags:        []string{img.Ref},
		Dockerfile:  "Dockerfile",
		Labels:      map[string]string{LabelImage: hash},
		Remove:      true,
		ForceRemove: true,
		NetworkMode: "none",
		Version:     build.BuilderV1,
	})
	if err != nil {
		return Image{}, fmt.Errorf("build image %s: %w", img.Ref, err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	if err := jsonmessage.DisplayJSONMessagesStream(resp.Body, &out, 0, false, nil); err != nil {
		var jerr *jsonmessage.JSONError
		if errors.As(err, &jerr) {
			return Image{}, fmt.Errorf("build image %s: %w\n%s", img.Ref, err, out.Bytes())
		}
		return Image{}, fmt.Errorf("build image %s: %w", img.Ref, err)
	}
	if _, err := c.ImageInspect(ctx, img.Ref); err != nil {
		return Image{}, fmt.Errorf("build image %s: not there after the build: %w\n%s", img.Ref, err, out.Bytes())
	}
	img.Built = true
	return img, nil
}

// RemoveUnusedImages removes the node images (ImageRepo, labelled
// LabelImage) that no container, running or not, was made from, and
// returns their references. Each binary rocelab was built from leaves one
// in the engine's cache (they are kept so that the next deploy starts at
// once); this clears them. Images of containers that still exist stay,
// and nothing is forced. Run it while no docker deploy is in progress: a
// deploy that found its image but has not made its containers yet would
// lose it. only, when not nil, narrows the removal to the references it
// accepts (a test removes the images it built and no one else's).
func (r *Runtime) RemoveUnusedImages(ctx context.Context, only func(ref string) bool) ([]string, error) {
	imgs, err := r.c.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelImage))})
	if err != nil {
		return nil, fmt.Errorf("list node images: %w", err)
	}
	var removed []string
	var errs []error
	for _, im := range imgs {
		used, err := r.c.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("ancestor", im.ID))})
		if err != nil {
			errs = append(errs, fmt.Errorf("containers of image %s: %w", im.ID, err))
			continue
		}
		if len(used) > 0 {
			continue
		}
		for _, tag := range im.RepoTags {
			if !strings.HasPrefix(tag, ImageRepo+":") {
				continue // another repository's name for it: not ours to drop
			}
			if only != nil && !only(tag) {
				continue
			}
			if _, err := r.c.ImageRemove(ctx, tag, image.RemoveOptions{PruneChildren: true}); err != nil && !client.IsErrNotFound(err) {
				errs = append(errs, fmt.Errorf("remove image %s: %w", tag, err))
				continue
			}
			removed = append(removed, tag)
		}
	}
	return removed, errors.Join(errs...)
}
