package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/placer/placer/report"
	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=..."; when
// it is not, the module version of the build info is used (a `go install
// github.com/placer/placer/cmd/placer@v1.2.3` build reports v1.2.3).
var version = ""

// versionInfo is what `placer version --json` prints.
type versionInfo struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

func buildVersion() versionInfo {
	v := versionInfo{Version: version, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v.Version = bi.Main.Version
		}
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				v.Revision = kv.Value
			case "vcs.modified":
				v.Modified = kv.Value == "true"
			}
		}
	}
	if v.Version == "" {
		v.Version = "dev"
	}
	return v
}

// versionString is the one-line version (placer --version, placer version).
func versionString() string {
	v := buildVersion()
	rev := ""
	if v.Revision != "" {
		rev = " " + v.Revision
		if v.Modified {
			rev += "+modified"
		}
	}
	return fmt.Sprintf("placer %s%s %s %s/%s", v.Version, rev, v.Go, v.OS, v.Arch)
}

func init() {
	register(func(s *streams) *cobra.Command {
		var asJSON bool
		cmd := &cobra.Command{
			Use:   "version",
			Short: "Print placer's version (also placer --version)",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if asJSON {
					return report.JSON(s.Out, buildVersion())
				}
				fmt.Fprintln(s.Out, versionString())
				return nil
			},
		}
		cmd.Flags().BoolVar(&asJSON, "json", false, "print the version as JSON")
		return cmd
	})
}
