// Package layering keeps the import rules: every package's doc.go ends
// with a line "May import: ..." naming the placer packages it may import
// (a pattern "x/..." is x and everything below it), and the test here
// holds each package's imports, as go list reports them, to its line.
// Test files may import more (test helpers, the roofline model to build
// problems); the rules are about what a package is built from.
//
// May import: no other placer package
package layering
