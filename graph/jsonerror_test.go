package graph

import (
	"encoding/json"
	"testing"
)

// TestJSONErrorKinds: a value of the wrong kind is named in the file's
// words (object, array, number, string), never Go's type names. The
// column is encoding/json's offset: just after the value read (after
// the bracket of an array or object).
func TestJSONErrorKinds(t *testing.T) {
	type file struct {
		GPUs  int               `json:"gpus"`
		Name  string            `json:"name"`
		Rate  float64           `json:"rate"`
		On    bool              `json:"on"`
		Ops   []string          `json:"ops"`
		Extra map[string]string `json:"extra"`
	}
	for _, tc := range []struct{ data, want string }{
		{`[1, 2]`, "profile: line 1, column 2: want an object, got an array"},
		{`"x"`, "profile: line 1, column 4: want an object, got a string"},
		{`{"gpus": "8"}`, `profile: line 1, column 13: field "gpus": want a whole number, got a string`},
		{`{"gpus": 1.5}`, `profile: line 1, column 13: field "gpus": want a whole number, got the number 1.5`},
		{`{"name": 3}`, `profile: line 1, column 11: field "name": want a string, got a number`},
		{`{"rate": true}`, `profile: line 1, column 14: field "rate": want a number, got true or false`},
		{`{"on": {}}`, `profile: line 1, column 9: field "on": want true or false, got an object`},
		{`{"ops": {}}`, `profile: line 1, column 10: field "ops": want an array, got an object`},
		{`{"extra": [1]}`, `profile: line 1, column 12: field "extra": want an object, got an array`},
	} {
		var f file
		err := json.Unmarshal([]byte(tc.data), &f)
		if err == nil {
			t.Fatalf("%s: no error", tc.data)
		}
		if got := JSONError("profile", []byte(tc.data), err).Error(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.data, got, tc.want)
		}
	}
}
