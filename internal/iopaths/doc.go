// Package iopaths holds the rule "no input is ever an output": before a
// command does any work, every path it will write is compared with every
// path it reads, and a command line that names one file as both (directly,
// through a symbolic link or a hard link) is refused in one line, exit 2,
// instead of overwriting its own input with its result.
//
// May import: internal/fail
package iopaths
