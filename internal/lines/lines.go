package lines

import (
	"bufio"
	"io"
	"strings"
)

// Each calls each with every line of r that is not blank, trimmed,
// numbered from 1 (the files' lines of JSON), and stops at its first
// error or r's. A line may be up to 1 MiB long.
func Each(r io.Reader, each func(n int, text string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if text := strings.TrimSpace(sc.Text()); text != "" {
			if err := each(n, text); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}
