// Command dashgen writes rocelab's Grafana dashboards (dashboards/grafana)
// as JSON files into a directory: `make dashboards` runs it.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/rocelab/rocelab/dashboards/grafana"
)

func main() {
	out := flag.String("o", "dashboards/grafana/json", "directory to write the dashboards into")
	flag.Parse()
	files, err := grafana.Generate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "dashgen:", err)
		os.Exit(1)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "dashgen:", err)
		os.Exit(1)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(*out, n)
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "dashgen:", err)
			os.Exit(1)
		}
		fmt.Println("wrote", p)
	}
}
