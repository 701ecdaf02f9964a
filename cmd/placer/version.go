package main

import (
	"fmt"

	"github.com/placer/placer/report"
	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=..."; when
// it is not, the module version of the build info is used (a `go install
// github.com/placer/placer/cmd/placer@v1.2.3` build reports v1.2.3).
var version = ""

// versionString is the one-line version (placer --version, placer version).
func versionString() string { return buildVersion(version).String() }

func init() {
	register(func(s *streams) *cobra.Command {
		var asJSON bool
		cmd := &cobra.Command{
			Use:   "version",
			Short: "Print placer's version (also placer --version)",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if asJSON {
					return report.JSON(s.Out, buildVersion(version))
				}
				fmt.Fprintln(s.Out, versionString())
				return nil
			},
		}
		cmd.Flags().BoolVar(&asJSON, "json", false, "print the version as JSON")
		return cmd
	})
}
