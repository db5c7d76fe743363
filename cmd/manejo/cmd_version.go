package main

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/airbusgeo/godal"
)

func init() {
	register(&command{name: "version", synopsis: "print the manejo, Go and GDAL versions", run: runVersion})
}

func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "version", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	v := godal.Version()
	fmt.Fprintf(stdout, "manejo %s (%s, GDAL %d.%d.%d)\n", version, runtime.Version(), v.Major(), v.Minor(), v.Revision())
	return nil
}
