// Package job is between the start and the end.
package job

// Prepare leads to no end.
func Prepare(s string) { _ = s }
