package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Declared is the values of the keys declared outside this package
// (AddKey: a mechanism's key, declared in the mechanism's own file), as
// "name=value" pairs in the order set, comma-separated: a string, so
// that a Strategy stays a comparable value. A key at its default is not
// in it.
type Declared string

// Value is key name's value in d ("": its default).
func (d Declared) Value(name string) string {
	for _, kv := range strings.Split(string(d), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// On is whether switch name (SwitchKey) is on in d.
func (d Declared) On(name string) bool { return d.Value(name) == "on" }

// with is d with key name's value v ("": the default, left out).
func (d Declared) with(name, v string) Declared {
	var kvs []string
	for _, kv := range strings.Split(string(d), ",") {
		if k, _, _ := strings.Cut(kv, "="); kv != "" && k != name {
			kvs = append(kvs, kv)
		}
	}
	if v != "" {
		kvs = append(kvs, name+"="+v)
	}
	return Declared(strings.Join(kvs, ","))
}

// SwitchKey is k as a switch held in Strategy.Declared (on|off, default
// off; written where on, among the software's and the other keys of
// groupRest): a key that a plug-in declares in its own file and
// registers with itself (AddKey), with no field of its own.
func SwitchKey(k Key) Key {
	k.Values, k.Default, k.group = "on|off", "off", groupRest
	k.set = func(s *Strategy, v string, _ map[string]bool) error {
		on, err := onOff(v)
		if err != nil {
			return err
		}
		s.Declared = s.Declared.with(k.Name, map[bool]string{true: "on"}[on])
		return nil
	}
	k.write = func(s Strategy) string { return s.Declared.Value(k.Name) }
	return k
}

// CountKey is k as a positive whole number held in Strategy.Declared
// (values N >= 1, default off: not written), among the software's and
// the other keys of groupRest: a declared key that says a size, as
// SwitchKey's says on or off. Declared.Count reads it.
func CountKey(k Key) Key {
	k.Values, k.Default, k.group = "N", "off", groupRest
	k.set = func(s *Strategy, v string, _ map[string]bool) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("want a whole number >= 1, got %q", v)
		}
		s.Declared = s.Declared.with(k.Name, strconv.Itoa(n))
		return nil
	}
	k.write = func(s Strategy) string { return s.Declared.Value(k.Name) }
	return k
}

// Count is count key name's value in d (CountKey), 0 where not set.
func (d Declared) Count(name string) int {
	n, err := strconv.Atoi(d.Value(name))
	if err != nil {
		return 0
	}
	return n
}

// AddKey adds key k (SwitchKey's) after Keys' own: ParseStrategy reads
// it, String and Plan.String write it, StrategyKeys and the exports'
// refusals name it, as they do a key of Keys (every export refuses a
// plan that sets it: it names no export). It refuses a key whose name or
// alias is taken, one without a name, a docs file or a help line, one
// that names an export, or one no constructor made (no way to set or
// write it). A plug-in's
// registration adds its keys (planner/mechanisms' Registered).
func AddKey(k Key) error {
	names := append([]string{k.Name}, k.Aliases...)
	switch {
	case k.Name == "" || k.Help == "" || k.Doc == "":
		return fmt.Errorf("key %q: a declared key needs a name, a help line and a docs file", k.Name)
	case len(k.Exports) > 0:
		return fmt.Errorf("key %q: a declared key is written by no export (the exports' keys are Keys' own)", k.Name)
	case k.set == nil || k.write == nil:
		return fmt.Errorf("key %q: not made by a key constructor (SwitchKey, CountKey)", k.Name)
	case strings.ToLower(k.Name) != k.Name || strings.ContainsAny(k.Name, ",= "):
		return fmt.Errorf("key %q: want lower case, no comma, '=' or space", k.Name)
	}
	for _, n := range names {
		if keyIndex[n] != nil || n == "bucket" {
			return fmt.Errorf("key %q named twice", n)
		}
	}
	Keys = append(slices.Clip(Keys), k)
	reindexKeys()
	return nil
}

// ReindexKeys rebuilds what reads Keys by name (ParseStrategy's index,
// StrategyKeys) after Keys is set back (a test's cleanup of AddKey).
func ReindexKeys() { reindexKeys() }

// reindexKeys rebuilds keyIndex and StrategyKeys from Keys.
func reindexKeys() {
	keyIndex = indexKeys()
	StrategyKeys = keyNames()
}
