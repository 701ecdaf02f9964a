// Package nntest checks hand-derived gradients against central finite
// differences, for the tests of the policy network's layers.
//
// May import: nn, graph
package nntest
