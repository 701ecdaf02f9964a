package main

import (
	"context"
	"errors"
)

func asRunError(err error, re *runError) bool { return errors.As(err, re) }

func isCanceled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
