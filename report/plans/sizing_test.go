package plans

import "testing"

func TestBandText(t *testing.T) {
	for _, c := range []struct {
		b    Band
		unit func(float64) (float64, string)
		pre  string
		want string
	}{
		{Band{Value: 4.11e6, Low: 3.26e6, High: 4.96e6}, countUnit, "", "4.11M (3.26-4.96)"},
		{Band{Value: 16.4e6, Low: 13e6, High: 19.8e6}, countUnit, "$", "$16.4M (13-19.8)"},
		{Band{Value: 170 * 86400, Low: 135 * 86400, High: 205 * 86400}, dayUnit, "", "170 d (135-205)"},
		{Band{Value: 1690 * 86400, Low: 1130 * 86400, High: 2250 * 86400}, dayUnit, "", "1690 d (1130-2250)"},
		{Band{Value: 5 * 3600}, dayUnit, "", "5 h"},
		{Band{Value: 950}, countUnit, "", "950"},
	} {
		if got := bandText(c.b, c.pre, c.unit); got != c.want {
			t.Errorf("bandText(%+v) = %q, want %q", c.b, got, c.want)
		}
	}
}
