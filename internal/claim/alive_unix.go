//go:build unix

package claim

import (
	"errors"
	"syscall"
)

// alive says whether process pid of this host exists (a process of
// another user counts).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
