package sizing

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/placer/placer/internal/bounded"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/report/plans"
)

// DefaultPrices is prices.csv as committed: public on-demand list prices
// per GPU-hour, each row with the page it was read from and the date.
//
//go:embed prices.csv
var DefaultPrices []byte

// DefaultPricesName is what the answer calls the default table.
const DefaultPricesName = "jobs/sizing/prices.csv (public prices per GPU-hour)"

// priceColumns are a price table's columns, in order.
var priceColumns = []string{"preset", "provider", "offer", "usd_per_gpu_hour", "source", "date"}

// ReadPrices reads a price table (CSV, priceColumns as its header; lines
// starting with # are comments): every row must name a pod preset, a
// price above 0, a source and a date (YYYY-MM-DD). name is the file's
// name in errors.
func ReadPrices(r io.Reader, name string) ([]plans.Price, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("price table %s: %w", name, err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], priceColumns) {
		return nil, fmt.Errorf("price table %s: the header must be %s", name, strings.Join(priceColumns, ","))
	}
	presets := plan.PodPresets()
	var out []plans.Price
	for i, rec := range recs[1:] {
		where := fmt.Sprintf("price table %s row %d", name, i+1)
		if len(rec) != len(priceColumns) {
			return nil, fmt.Errorf("%s: %d fields, want %d (%s)", where, len(rec), len(priceColumns), strings.Join(priceColumns, ","))
		}
		p := plans.Price{Preset: rec[0], Provider: rec[1], Offer: rec[2], Source: rec[4], Date: rec[5]}
		if !slices.Contains(presets, p.Preset) {
			return nil, fmt.Errorf("%s: %q is no pod preset (%s)", where, p.Preset, strings.Join(presets, ", "))
		}
		if p.PerHour, err = strconv.ParseFloat(rec[3], 64); err != nil || !(p.PerHour > 0) || math.IsInf(p.PerHour, 0) {
			return nil, fmt.Errorf("%s: usd_per_gpu_hour %q is not a price above 0", where, rec[3])
		}
		if p.Provider == "" || p.Source == "" {
			return nil, fmt.Errorf("%s: every row names its provider and its source", where)
		}
		if _, err := time.Parse(time.DateOnly, p.Date); err != nil {
			return nil, fmt.Errorf("%s: date %q is not YYYY-MM-DD", where, p.Date)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("price table %s: no rows", name)
	}
	return out, nil
}

// loadPrices is o's price table and its name.
func (o Options) loadPrices() ([]plans.Price, string, error) {
	if o.Prices == "" {
		p, err := ReadPrices(bytes.NewReader(DefaultPrices), "prices.csv")
		return p, DefaultPricesName, err
	}
	f, err := bounded.Open(o.Prices, bounded.Config, "a prices file")
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	p, err := ReadPrices(f, o.Prices)
	return p, o.Prices, err
}

// PriceOf is the row that prices preset: of provider's rows ("" = any
// provider's), the cheapest; nil when none.
func PriceOf(rows []plans.Price, preset, provider string) *plans.Price {
	var best *plans.Price
	for i := range rows {
		r := &rows[i]
		if r.Preset != preset || (provider != "" && !strings.EqualFold(r.Provider, provider)) {
			continue
		}
		if best == nil || r.PerHour < best.PerHour {
			best = r
		}
	}
	if best == nil {
		return nil
	}
	c := *best
	return &c
}
