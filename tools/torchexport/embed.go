package torchexporttool

import _ "embed"

// Zoo is zoo.py.
//
//go:embed zoo.py
var Zoo []byte
