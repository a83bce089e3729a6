// Command simbench is `make bench-sim`: the simulator at data-center scale,
// the command of package lab/simulation/simbench, which holds the
// topologies, workloads and figures.
//
// Without -scenario it runs every scenario in its own child process (so each
// peak RSS is its own) and prints their figures:
//
//	permutation-ecmp   1,024-host three-tier Clos at 100G, PFC, single-path
//	                   ECMP (RoCEv2), 2 MB per flow permutation
//	permutation-spray  the same with MetaRoCE NIC spraying: each flow split
//	                   over 4 QPs of 64 paths (256 UDP source ports)
//	allreduce          2,048-GPU ring all-reduce at 400G
//
// and, on request only, -scenario hier-allreduce (the 2,048-GPU
// hierarchical all-reduce: 8-GPU groups, then 8 rails of 256 ranks) and
// -scenario alltoall (an all-to-all across the 2,048 GPUs over QP pairs
// connected on first use).
//
// Flags: -seed, -scenario, -workers, -partitions, -cpuprofile,
// -memprofile. Every scenario but the all-to-all runs on -workers
// goroutines (default: the machine's CPUs), over a lab cut into
// -partitions engines by pod or group of racks (default:
// simlab.DefaultPartitions, 16 for one or two workers, at most one per
// rack; 1 is one engine); the results, digest included, are the same for
// any numbers. Run it with GOMAXPROCS=1
// -workers 1 for one-core figures.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"syscall"
	"time"

	"github.com/rocelab/rocelab/lab/simulation/simbench"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/topologies"
)

var scenarios = []string{"permutation-ecmp", "permutation-spray", "allreduce"}

func main() {
	seed := flag.Uint64("seed", 1, "seed of the labs and the permutation")
	scenario := flag.String("scenario", "", "run one scenario in this process: "+fmt.Sprint(scenarios)+", hier-allreduce or alltoall")
	cpu := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	mem := flag.String("memprofile", "", "write an allocation profile to this file at the end")
	collBytes := flag.Int64("coll-bytes", 8<<20, "all-reduce size in bytes")
	zones := flag.Int("zones", 0, "pods (zones) of the topology; 0 keeps the scenario's (16 for the permutation, 4 for the all-reduce)")
	paths := flag.Int("paths", 64, "paths of each MetaRoCE QP in permutation-spray")
	qps := flag.Int("qps", 4, "QPs each permutation-spray flow is split over (each QP sprays over -paths paths)")
	cc := flag.String("cc", "none", "congestion control of every QP (none, dcqcn, credit)")
	noHuge := flag.Bool("no-hugepages", false, "leave the heap on default pages (no transparent huge page advice before the run)")
	workers := flag.Int("workers", runtime.NumCPU(), "goroutines a scenario runs on, side by side (results are the same for any number; the all-to-all runs on one)")
	partitions := flag.Int("partitions", 0, "engines the fabric is cut into, by pod or by groups of racks (0: 16, or 8 per worker if more; 1: one engine; results are the same)")
	zoneGroups := flag.Int("hier-zone", 0, "hier-allreduce: groups (hosts) per zone, for an all-reduce in three levels (0: a ring per rail across every host)")
	nvlink := flag.String("nvlink", "", "hier-allreduce: the groups' rate inside a host (e.g. 3600G): their phases off the fabric (default: on it)")
	topo := flag.String("topology", "", "run the scenario on this topology (a built-in such as seed-24k, or a file) instead of its generated Clos")
	progress := flag.Duration("progress", 0, "print the run's fabric time, events/s and heap to stderr this often (0: never; with it the run ends on a microsecond of fabric time, so its digest differs)")
	flag.Parse()
	if *scenario == "" {
		for _, s := range scenarios {
			args := append([]string{"-scenario", s}, os.Args[1:]...)
			cmd := exec.Command(os.Args[0], args...)
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			if err := cmd.Run(); err != nil {
				fmt.Fprintf(os.Stderr, "simbench: %s: %v\n", s, err)
				os.Exit(1)
			}
		}
		return
	}
	if *cpu != "" {
		f, err := os.Create(*cpu)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
		// Ctrl-C ends a long run with its profile so far.
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		go func() {
			<-sig
			pprof.StopCPUProfile()
			f.Close()
			fmt.Fprintln(os.Stderr, "simbench: interrupted; the CPU profile so far is in", *cpu)
			os.Exit(130)
		}()
	}
	if *mem != "" {
		runtime.MemProfileRate = 64 << 10
	}
	cfg := simbench.Config{Seed: *seed, CollBytes: *collBytes, CC: *cc, NoHugePages: *noHuge, Workers: *workers, Partitions: *partitions,
		Progress: progressPrinter(*progress), HierZone: *zoneGroups}
	if *nvlink != "" {
		r, err := topologies.ParseRate(*nvlink)
		if err != nil {
			fail(fmt.Errorf("-nvlink: %w", err))
		}
		cfg.NVLink = r
	}
	fat, cluster := simbench.FatTree1024(), simbench.Cluster2048()
	if *zones > 0 {
		fat.Zones, cluster.Zones = *zones, *zones
	}
	if *topo != "" {
		t, err := loadTopology(*topo)
		if err != nil {
			fail(err)
		}
		fat, cluster = simbench.Of(t), simbench.Of(t)
	}
	var r *simbench.Report
	var err error
	switch *scenario {
	case "permutation-ecmp":
		r, err = simbench.Permutation(fat, cfg)
	case "permutation-spray":
		cfg.Mode, cfg.Paths, cfg.QPs = "metaroce", *paths, *qps
		r, err = simbench.Permutation(fat, cfg)
	case "allreduce":
		r, err = simbench.AllReduce(cluster, cfg)
	case "hier-allreduce":
		r, err = simbench.HierAllReduce(cluster, cfg)
	case "alltoall":
		r, err = simbench.AllToAll(cluster, cfg)
	default:
		err = fmt.Errorf("unknown scenario %q (want one of %v)", *scenario, scenarios)
	}
	if r != nil {
		fmt.Printf("%s(GOMAXPROCS=%d)\n\n", r.Summary(), runtime.GOMAXPROCS(0))
	}
	if *mem != "" {
		f, ferr := os.Create(*mem)
		if ferr == nil {
			ferr = pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
		if ferr != nil {
			fail(ferr)
		}
	}
	if err != nil {
		pprof.StopCPUProfile()
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "simbench:", err)
	os.Exit(1)
}

// loadTopology reads a built-in topology by name, or a file.
func loadTopology(name string) (*topologies.Topology, error) {
	if slices.Contains(topologies.BuiltinNames(), name) {
		return topologies.Builtin(name)
	}
	return topologies.Load(name)
}

// progressPrinter returns a progress callback printing fabric time,
// events/s and the heap to stderr at most every period of wall clock.
func progressPrinter(period time.Duration) func(simlab.Progress) {
	if period <= 0 {
		return nil
	}
	start := time.Now()
	last, lastEvents := start, uint64(0)
	return func(p simlab.Progress) {
		now := time.Now()
		if now.Sub(last) < period {
			return
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Fprintf(os.Stderr, "# %6.1fs: fabric time %v, %.2fM events/s, heap %.1f GB\n",
			now.Sub(start).Seconds(), p.Now, float64(p.Events-lastEvents)/now.Sub(last).Seconds()/1e6, float64(ms.HeapAlloc)/1e9)
		last, lastEvents = now, p.Events
	}
}
