// Package torchenv finds the Python that runs placer's PyTorch tools, by
// the one rule the Makefile, the placer binary and the tests share:
// $TORCH_PY when it is set, else the virtualenv that make deps creates,
// ${XDG_CACHE_HOME:-$HOME/.cache}/placer/torch-venv (the Makefile's
// VENV default; make exports TORCH_PY to what it runs, so a make VENV=DIR
// reaches the Go code and its tests too).
//
// May import: no other placer package
package torchenv
