package metrics

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// BuildInfoName is the name of the build-info family.
const BuildInfoName = "rocelab_build_info"

// BuildInfo is what rocelab_build_info says about the binary serving
// /metrics, as Prometheus's own exporters say it (prometheus_build_info):
// the value is 1 and the facts are labels.
type BuildInfo struct {
	Version   string // the release, "dev" for a build without one
	Revision  string // the VCS commit, "unknown" when the build did not record it
	GoVersion string // the Go toolchain, runtime.Version()
}

// ReadBuildInfo returns the running binary's BuildInfo (BuildInfoFrom
// over debug.ReadBuildInfo).
func ReadBuildInfo(version string) BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return BuildInfoFrom(version, bi)
}

// BuildInfoFrom returns the BuildInfo of a binary built as bi says (nil:
// it does not say): version as given (the -X main.version of `rocelab`),
// else the main module's version, else "dev"; the revision Go stamped
// (vcs.revision, with "-dirty" when vcs.modified says the tree had
// changes), else "unknown"; the running Go's version.
func BuildInfoFrom(version string, bi *debug.BuildInfo) BuildInfo {
	b := BuildInfo{Version: version, Revision: "unknown", GoVersion: runtime.Version()}
	if bi != nil && b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		b.Version = bi.Main.Version
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	if bi == nil {
		return b
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && b.Revision != "unknown" {
		b.Revision += "-dirty"
	}
	return b
}

// NewBuildInfoCollector returns a collector of one gauge,
// rocelab_build_info{version, revision, goversion} 1. It has no lab
// label: it describes the process serving /metrics, not a lab.
func NewBuildInfoCollector(b BuildInfo) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: BuildInfoName,
		Help: "A metric with a constant '1' value labeled by version, revision and goversion of the rocelab binary serving these metrics.",
		ConstLabels: prometheus.Labels{
			"version":   b.Version,
			"revision":  b.Revision,
			"goversion": b.GoVersion,
		},
	}, func() float64 { return 1 })
}
