// Package torchexporttool holds the exporter's zoo (zoo.py: the models
// --model names without a colon), embedded so that placer profile
// --model finds them from anywhere.
//
// May import: no other placer package
package torchexporttool
