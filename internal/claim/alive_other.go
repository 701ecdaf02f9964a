//go:build !unix

package claim

// alive cannot tell here: a claim then lives for its lease.
func alive(pid int) bool { return true }
