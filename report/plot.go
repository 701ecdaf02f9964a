package report

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/placer/placer/internal/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Series is one line of a plot.
type Series struct {
	Name string
	X, Y []float64
	Dash bool // draw dashed (reference lines)
	Dot  bool // draw dotted (the answer's level)
	// Marks draws each point's mark as well as the line (a series of
	// one point has no line to draw).
	Marks bool
}

// Plot describes a line plot.
type Plot struct {
	Title, XLabel, YLabel string
	Series                []Series
	// LegendTop puts the legend top right, out of the way of curves that
	// fall (bottom right by default, for curves that rise).
	LegendTop bool
}

// Palette is the colours of a plot's series and bars, in order.
var Palette = []color.Color{
	color.RGBA{R: 31, G: 119, B: 180, A: 255}, color.RGBA{R: 214, G: 39, B: 40, A: 255},
	color.RGBA{R: 44, G: 160, B: 44, A: 255}, color.RGBA{R: 255, G: 127, B: 14, A: 255},
	color.RGBA{R: 148, G: 103, B: 189, A: 255}, color.RGBA{R: 140, G: 86, B: 75, A: 255},
	color.RGBA{R: 227, G: 119, B: 194, A: 255}, color.RGBA{R: 127, G: 127, B: 127, A: 255},
	color.RGBA{R: 188, G: 189, B: 34, A: 255}, color.RGBA{R: 23, G: 190, B: 207, A: 255},
}

// WritePlot renders p to path; the extension picks the format (.png,
// .svg, .pdf). The file is written atomically.
func WritePlot(path string, p Plot) error {
	if _, err := PlotFormat(path); err != nil {
		return err
	}
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text = p.XLabel
	pl.Y.Label.Text = p.YLabel
	pl.X.Tick.Marker = ReadableTicks{}
	pl.Y.Tick.Marker = ReadableTicks{}
	pl.Add(plotter.NewGrid())
	pl.Legend.Top = p.LegendTop // curves that improve end top-right, by default
	for i, s := range p.Series {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("plot %s: series %q has %d x and %d y values", path, s.Name, len(s.X), len(s.Y))
		}
		if len(s.X) == 0 {
			continue
		}
		xy := make(plotter.XYs, len(s.X))
		for k := range s.X {
			xy[k].X, xy[k].Y = s.X[k], s.Y[k]
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		l.Color = Palette[i%len(Palette)]
		l.Width = vg.Points(1.5)
		switch {
		case s.Dash:
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		case s.Dot:
			l.Dashes = []vg.Length{vg.Points(1.5), vg.Points(2.5)}
		}
		pl.Add(l)
		if !s.Marks {
			pl.Legend.Add(s.Name, l)
			continue
		}
		sc, err := plotter.NewScatter(xy)
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		sc.Color, sc.Shape, sc.Radius = l.Color, draw.CircleGlyph{}, vg.Points(3)
		pl.Add(sc)
		pl.Legend.Add(s.Name, l, sc)
	}
	legendRoom(pl, len(p.Series), p.LegendTop)
	edgeRoom(pl, p)
	return SavePlot(path, pl)
}

// legendRoom widens the y range by the legend's height (about 6% of the
// plot per entry) on the side the legend sits, so that it covers no line.
func legendRoom(pl *plot.Plot, entries int, top bool) {
	span := pl.Y.Max - pl.Y.Min
	if span <= 0 || entries == 0 {
		return
	}
	pad := span * (0.06*float64(entries) + 0.04) / (1 - 0.06*float64(entries) - 0.04)
	if top {
		pl.Y.Max += pad
	} else {
		pl.Y.Min -= pad
	}
}

// edgeRoom keeps lines and marks off the axes: 3% of the y range on
// the side the legend is not (a level line at the lowest value drawn on
// the x axis was hidden by it), and where a series has marks 3% of the
// x range on the right (a mark at the last x was cut in half).
func edgeRoom(pl *plot.Plot, p Plot) {
	if span := pl.Y.Max - pl.Y.Min; span > 0 {
		if p.LegendTop {
			pl.Y.Min -= 0.03 * span
		} else {
			pl.Y.Max += 0.03 * span
		}
	}
	if span := pl.X.Max - pl.X.Min; span > 0 && slices.ContainsFunc(p.Series, func(s Series) bool { return s.Marks }) {
		pl.X.Max += 0.03 * span
	}
}

// CheckPlotPath says whether path's extension names a plot format
// WritePlot and WriteBarPlot write (.png, .svg, .pdf), so that a long run
// can refuse a bad path before it starts.
func CheckPlotPath(path string) error {
	_, err := PlotFormat(path)
	return err
}

// PlotFormat returns the format path's extension picks.
func PlotFormat(path string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	switch ext {
	case "png", "svg", "pdf":
		return ext, nil
	}
	return "", fmt.Errorf("plot %s: unknown format %q (want .png, .svg or .pdf)", path, ext)
}

// plotMargin is the margin, in points, WritePlot and WriteBarPlot leave
// inside the page on every side.
const plotMargin = 8

// SavePlot renders pl to path atomically, in the format of its extension.
func SavePlot(path string, pl *plot.Plot) error {
	ext, err := PlotFormat(path)
	if err != nil {
		return err
	}
	const width, height = 8 * vg.Inch, 4.5 * vg.Inch
	var c vg.CanvasWriterTo
	switch ext {
	case "svg":
		// The fonts go into the file: a viewer without them (Liberation,
		// gonum/plot's default) would draw its own, of other widths, and
		// cut the labels off.
		c = vgsvg.NewWith(vgsvg.UseWH(width, height), vgsvg.EmbedFonts(true))
	case "pdf":
		c = vgpdf.New(width, height)
	default:
		c = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	}
	// A margin inside the page on every side: gonum/plot draws the plot
	// area, and a legend at its top right, up to the page's edge, where
	// the legend's line samples and the title's ascenders were cut off.
	pl.Legend.XOffs, pl.Legend.YOffs = -vg.Points(4), -vg.Points(2)
	m := vg.Points(plotMargin)
	page := draw.New(c)
	page.SetColor(pl.BackgroundColor) // the margin too
	page.Fill(page.Rectangle.Path())
	pl.Draw(draw.Crop(page, m, -m, m, -m))
	var w io.WriterTo = c
	return atomicfile.Write(path, func(f io.Writer) error {
		_, err := w.WriteTo(f)
		return err
	})
}

// BarSeries is one kind of bar of a grouped bar chart: one value per
// group (0 = no bar).
type BarSeries struct {
	Name   string
	Values []float64
}

// BarPlot describes a grouped bar chart: one group of bars per name of
// Groups, one bar per series in each, and a dashed reference line at Ref
// (none when RefName is "").
type BarPlot struct {
	Title, YLabel string
	Groups        []string
	Series        []BarSeries
	Ref           float64
	RefName       string
	// Headroom is the y axis' top over the highest bar, room for the
	// legend (0 = 1.35: a legend of a few entries).
	Headroom float64
}

// WriteBarPlot renders p to path as WritePlot does.
func WriteBarPlot(path string, p BarPlot) error {
	if _, err := PlotFormat(path); err != nil {
		return err
	}
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.Y.Label.Text = p.YLabel
	pl.Y.Min = 0
	pl.Add(plotter.NewGrid())
	pl.Legend.Top = true
	pl.Legend.Left = true
	n := len(p.Series)
	// Bars fill three quarters of a group's share of about 520 points of
	// plot width, at most 30 points each.
	width := vg.Points(min(30, 0.75*520/float64(max(len(p.Groups), 1))/float64(max(n, 1))))
	top := p.Ref
	for _, s := range p.Series {
		for _, v := range s.Values {
			top = max(top, v)
		}
	}
	// Headroom above the bars for the legend.
	pl.Y.Max = cmp.Or(p.Headroom, 1.35) * top
	for i, s := range p.Series {
		if len(s.Values) != len(p.Groups) {
			return fmt.Errorf("plot %s: series %q has %d values for %d groups", path, s.Name, len(s.Values), len(p.Groups))
		}
		b, err := plotter.NewBarChart(plotter.Values(s.Values), width)
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		b.Color = Palette[i%len(Palette)]
		b.LineStyle.Width = 0
		b.Offset = width * vg.Length(2*i-n+1) / 2
		pl.Add(b)
		pl.Legend.Add(s.Name, b)
	}
	if p.RefName != "" && len(p.Groups) > 0 {
		l, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: p.Ref}, {X: float64(len(p.Groups)) - 0.5, Y: p.Ref}})
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		l.Width = vg.Points(1)
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		pl.Add(l)
		pl.Legend.Add(p.RefName, l)
	}
	pl.NominalX(p.Groups...)
	return SavePlot(path, pl)
}
