// Package claim keeps claims on shared work: before a worker runs a unit
// of work whose result is the file PATH, it claims PATH, so that two
// workers (processes on one machine, or tasks of a cluster's array job
// sharing a folder) never run it at once.
//
// A claim is a file beside PATH, PATH.claim.G (G = 0, 1, 2 ... its
// generation), created atomically and only if absent (written to a
// temporary file, then hard-linked to its name: a link never replaces a
// file, also on NFS). It holds its owner (host, process id, start time),
// a lease and the time it was last renewed; the owner renews it while it
// works (Keep) and marks it done or released when it stops. A claim whose
// lease has run out, or whose owner is a process of this host that no
// longer exists, is expired: another worker takes the work over by
// creating generation G+1, which only one worker can do. The claims of a
// path are kept (not removed) as its history: which workers took it, and
// which finished it.
//
// The clocks of the workers' hosts must agree to well within a lease
// (NTP). A claim is about who runs the work; whether the work is done is
// its result file's to say.
//
// May import: internal/...
package claim
