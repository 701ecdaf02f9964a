// Package atomicfile writes files so that a reader, a crash or a Ctrl-C
// never sees a half-written file: the data goes to a temporary file in the
// same folder, is synced, and is renamed over the target.
//
// May import: no other placer package
package atomicfile
