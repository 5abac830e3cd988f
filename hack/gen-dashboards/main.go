// Command gen-dashboards writes the chart's Grafana dashboards, built by internal/dashboards, as
// JSON files (run by make dashboards).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mysqlbench/mysqlbench-operator/internal/dashboards"
)

func main() {
	dir := flag.String("dir", "charts/mysqlbench-operator/files/grafana", "directory to write the dashboards' JSON files into")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "gen-dashboards:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range dashboards.Files {
		d, err := f.Build()
		if err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
		data, err := dashboards.Render(d)
		if err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
