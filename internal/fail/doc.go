// Package fail holds the typed errors that decide placer's exit status, in
// one place: a wrong command line (Usage, exit 2), an interrupted run
// (Interrupted, exit 130) and everything else, bad input data or a failed
// run (exit 1). Code maps an error to its status; no caller matches error
// text.
//
// May import: no other placer package
package fail
