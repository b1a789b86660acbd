package web

import (
	"fmt"
	"math"
	"strings"

	"github.com/dynabench-go/dynabench/internal/service"
)

// BoardChart is a server-rendered SVG of a leaderboard: one horizontal bar per ranked model for its
// Dynascore, with a whisker for its 95% interval. Like Chart, it is drawn with presentation
// attributes and CSS classes only (the CSP forbids inline styles).
type BoardChart struct {
	Width, Height int
	PlotLeft      float64
	PlotRight     float64
	ZeroX         float64
	AxisBottom    float64
	Bars          []BoardBar
	Ticks         []ChartText
	Summary       string
}

// BoardBar is one model's bar, whisker and labels.
type BoardBar struct {
	X, Y, W, H float64 // the bar, from zero to the Dynascore
	Bottom     float64 // Y + H
	// Label (rank and name) is drawn left-aligned, Value (score and interval) right-aligned, above the bar.
	LoX, HiX, MidY float64 // the whisker
	Label          ChartText
	Value          ChartText
	Title          string
}

const (
	boardW, boardRowH, boardTop, boardPad = 480, 46, 4, 14
)

// boardChart lays out the chart for the leaderboard's rows, in rank order: per model a line with
// its rank and name (left) and its Dynascore and interval (right), and under it the bar. The
// layout is narrow so that it stays legible on a phone.
func boardChart(rows []service.LeaderboardRow) *BoardChart {
	if len(rows) == 0 {
		return nil
	}
	c := &BoardChart{Width: boardW, Height: boardTop + boardRowH*len(rows) + 22, PlotLeft: boardPad, PlotRight: boardW - boardPad}
	lo, hi := 0.0, 0.0
	for _, r := range rows {
		lo = math.Min(lo, math.Min(r.Dynascore, r.DynascoreCI[0]))
		hi = math.Max(hi, math.Max(r.Dynascore, r.DynascoreCI[1]))
	}
	if hi-lo <= 0 {
		hi = lo + 1
	}
	step := niceStep((hi - lo) / 4)
	lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	x := func(v float64) float64 { return c.PlotLeft + (c.PlotRight-c.PlotLeft)*(v-lo)/(hi-lo) }
	c.ZeroX = x(0)
	bottom := float64(boardTop + boardRowH*len(rows))
	c.AxisBottom = bottom
	for v := lo; v <= hi+step/2; v += step {
		c.Ticks = append(c.Ticks, ChartText{X: x(v), Y: bottom + 16, Text: trimFloat(v)})
	}
	var summary []string
	for i, r := range rows {
		y := float64(boardTop + boardRowH*i)
		b := BoardBar{Y: y + 20, H: 18, LoX: x(r.DynascoreCI[0]), HiX: x(r.DynascoreCI[1])}
		b.MidY, b.Bottom = b.Y+b.H/2, b.Y+b.H
		b.X, b.W = math.Min(c.ZeroX, x(r.Dynascore)), math.Abs(x(r.Dynascore)-c.ZeroX)
		name := r.Model.Name
		if len([]rune(name)) > 32 {
			name = string([]rune(name)[:31]) + "…"
		}
		b.Label = ChartText{X: c.PlotLeft, Y: y + 15, Text: fmt.Sprintf("%d. %s", r.Rank, name)}
		b.Value = ChartText{X: c.PlotRight, Y: y + 15, Text: fmt.Sprintf("%.1f [%.1f, %.1f]", r.Dynascore, r.DynascoreCI[0], r.DynascoreCI[1])}
		b.Title = fmt.Sprintf("%s: Dynascore %.2f, 95%% interval %.2f to %.2f, rank %d", r.Model.Name, r.Dynascore, r.DynascoreCI[0], r.DynascoreCI[1], r.Rank)
		c.Bars = append(c.Bars, b)
		summary = append(summary, b.Title)
	}
	c.Summary = strings.Join(summary, "; ")
	return c
}

// niceStep rounds a step up to 1, 2 or 5 times a power of ten.
func niceStep(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func trimFloat(v float64) string {
	if math.Abs(v) < 1e-9 {
		return "0"
	}
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}
