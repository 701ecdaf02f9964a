package plan

import (
	"strings"
	"testing"
)

// TestFP8Gather: fp8gather=on reads with torchao's tensorwise recipe
// under FSDP on torchtitan, writes itself back, and is refused with a
// one-line error naming what is wrong everywhere else.
func TestFP8Gather(t *testing.T) {
	const titan = "dp=8,fsdp=on,stack=torchtitan-0.2,"
	cases := []struct{ text, want string }{
		{titan + "fp8=current,fp8gather=on", ""},
		{titan + "fp8=current,fp8gather=off", ""},
		{titan + "fp8=rowwise,fp8gather=on", `fp8gather=on with fp8="rowwise": torchao's float8 all-gather is the tensorwise recipe's`},
		{titan + "fp8gather=on", `fp8gather=on with fp8="": torchao's float8 all-gather is the tensorwise recipe's`},
		{"dp=8,stack=torchtitan-0.2,fp8=current,fp8gather=on", "fp8gather=on without fsdp=on"},
		{"dp=8,fsdp=on,fp8=current,fp8gather=on", "fp8gather=on on a stack that does not run torchao"},
		{titan + "fp8=current,fp8gather=maybe", `fp8gather`},
	}
	for _, c := range cases {
		s, err := ParseStrategy(c.text)
		if err == nil {
			err = s.Check()
		}
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.text, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: %v, want one line with %q", c.text, err, c.want)
		}
	}
	s, err := ParseStrategy(titan + "fp8=current,fp8gather=on")
	if err != nil || !s.FP8Gather || !strings.Contains(s.String(), "fsdp=on,fp8gather=on") {
		t.Fatalf("fp8gather=on: %+v, %v", s, err)
	}
	if back, err := ParseStrategy(s.String()); err != nil || back.String() != s.String() {
		t.Errorf("round trip of %q: %q, %v", s, back, err)
	}
}
