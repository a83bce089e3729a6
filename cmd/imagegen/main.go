// Command imagegen writes rocelab's OCI image — rocelab, rocelab-node,
// rocelab-controller and the verbs libraries from `make build`'s bin/ —
// as a docker-archive tarball that `docker load` and `ctr -n k8s.io
// images import` read, and optionally as an OCI image layout: `make image`
// runs it. The same files give the same image digest (internal/ociimage).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/rocelab/rocelab/internal/ociimage"
)

func main() {
	bin := flag.String("bin", "bin", "make build's output directory")
	out := flag.String("o", "bin/rocelab-image.tar", "docker-archive tarball to write")
	oci := flag.String("oci", "", "also write an OCI image layout into this new directory")
	ref := flag.String("tag", "rocelab:dev", "the image's name and tag")
	version := flag.String("version", "dev", "the image's version label")
	epoch := flag.Int64("source-date-epoch", 0, "time of the image and its files, in Unix seconds (0: "+ociimage.Epoch.Format("2006-01-02")+"); $SOURCE_DATE_EPOCH when set")
	flag.Parse()
	if err := run(*bin, *out, *oci, *ref, *version, *epoch); err != nil {
		fmt.Fprintln(os.Stderr, "imagegen:", err)
		os.Exit(1)
	}
}

func run(bin, out, oci, ref, version string, epoch int64) error {
	spec, err := ociimage.Rocelab(bin, version)
	if errors.Is(err, ociimage.ErrNoVerbsLib) {
		fmt.Fprintln(os.Stderr, "imagegen: note:", err)
	} else if err != nil {
		return err
	}
	if e := os.Getenv("SOURCE_DATE_EPOCH"); e != "" && epoch == 0 {
		if _, err := fmt.Sscan(e, &epoch); err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH=%q: %w", e, err)
		}
	}
	if epoch != 0 {
		spec.Time = time.Unix(epoch, 0).UTC()
	}
	img, err := ociimage.Build(spec)
	if err != nil {
		return err
	}
	if err := ociimage.WriteArchive(out, ref, img); err != nil {
		return err
	}
	if oci != "" {
		if err := ociimage.WriteLayout(oci, ref, img); err != nil {
			return err
		}
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s: %s %s\n", out, ref, d)
	return nil
}
