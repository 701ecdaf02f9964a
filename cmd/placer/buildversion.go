package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// versionInfo is placer's version and build (what `placer version --json`
// prints).
type versionInfo struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

// buildVersion is this binary's version: version when set (at build time,
// -ldflags "-X main.version=..."), else the module version of the build
// info (a `go install github.com/placer/placer/cmd/placer@v1.2.3` build
// reports v1.2.3), else "dev"; with the VCS revision when the build info
// has it.
func buildVersion(version string) versionInfo {
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

// String is the one-line version (placer --version, placer version).
func (v versionInfo) String() string {
	rev := ""
	if v.Revision != "" {
		rev = " " + v.Revision
		if v.Modified {
			rev += "+modified"
		}
	}
	return fmt.Sprintf("placer %s%s %s %s/%s", v.Version, rev, v.Go, v.OS, v.Arch)
}
