// Package lines reads a text file of one record a line (JSON Lines, as
// the measuring tools write them): each line that is not blank, trimmed
// and numbered, so that an error can name its line.
//
// May import: no other placer package
package lines
