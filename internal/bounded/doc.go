// Package bounded reads input files with a size limit suited to their
// kind: a file, device or stream past the limit is refused in
// one line ("more than 64 MiB, the most a plan file may be"), never read
// until memory runs out (`--plan /dev/zero`).
//
// May import: no other placer package
package bounded
