// Package torchtest gives tests the project's PyTorch by torchenv's rule,
// or skips them saying why; under make test (PLACER_REQUIRE_TORCH=1) a
// missing python or module fails the test instead, so that a set-up step
// make deps lacks shows as a failure in CI and not as a skip.
//
// May import: internal/torchenv
package torchtest
