package main

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// closedAtStart says whether standard descriptor fd was closed when
// placer started (`placer export ... >&-`). Go's runtime opens
// /dev/null read-write on a standard descriptor it finds closed
// (runtime.checkfds, Go 1.22 on), so that writes to it succeed and
// vanish; a shell's `>/dev/null` opens it write-only. fd being
// /dev/null opened read-write is the runtime's doing: the descriptor was
// closed, and what is written to it is lost.
func closedAtStart(fd int) bool {
	var st, null unix.Stat_t
	if unix.Fstat(fd, &st) != nil || unix.Stat(os.DevNull, &null) != nil {
		return false
	}
	if st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != null.Rdev {
		return false
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	return err == nil && fl&unix.O_ACCMODE == unix.O_RDWR
}

// errClosedStdout is the error of every write to a standard output
// closed at start.
var errClosedStdout = fmt.Errorf("%w (it was closed: >&-)", syscall.EBADF)

// closedOutput is a standard output closed at start: every write fails
// as it would on the closed descriptor.
type closedOutput struct{}

func (closedOutput) Write([]byte) (int, error) {
	return 0, errClosedStdout
}

// stdout is the process's standard output as placer writes it: os.Stdout,
// or closedOutput where it was closed at start.
func stdout() io.Writer {
	if closedAtStart(1) {
		return closedOutput{}
	}
	return os.Stdout
}
