package web

import (
	"fmt"
	"strings"

	"github.com/dynabench-go/dynabench"
)

// Chart is a server-rendered SVG of a task's rounds: per round, bars for collected, fooled and
// verified fooled examples (left axis, counts) and a line for vMER (right axis, 0–100 %). Shapes
// are drawn with presentation attributes and CSS classes: the CSP forbids inline styles.
type Chart struct {
	Width, Height int
	Bars          []ChartBar
	Labels        []ChartText // round numbers under the bars
	Ticks         []ChartText // left axis counts
	RightTicks    []ChartText // right axis percentages
	VMERLine      string      // polyline points
	VMERDots      []ChartDot
	PlotTop       int
	PlotBottom    int
	PlotLeft      int
	PlotRight     int
	Summary       string // the same data as text, for screen readers
}

// ChartBar is one bar.
type ChartBar struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

// ChartText is one label.
type ChartText struct {
	X, Y float64
	Text string
}

// ChartDot is one vMER point.
type ChartDot struct {
	X, Y  float64
	Title string
}

const (
	chartW, chartH                 = 640, 260
	plotL, plotR, plotT, plotB     = 44, 596, 16, 224
	barGap, groupGap, barsPerGroup = 2.0, 0.3, 3
)

// roundChart lays out the chart for the rounds, oldest first.
func roundChart(rounds []*dynabench.Round) *Chart {
	c := &Chart{Width: chartW, Height: chartH, PlotTop: plotT, PlotBottom: plotB, PlotLeft: plotL, PlotRight: plotR}
	if len(rounds) == 0 {
		return c
	}
	maxCount := int64(1)
	for _, r := range rounds {
		maxCount = max(maxCount, r.Stats.Collected)
	}
	top := niceCeil(maxCount)
	plotH := float64(plotB - plotT)
	y := func(v int64) float64 { return float64(plotB) - plotH*float64(v)/float64(top) }
	for i := 0; i <= 4; i++ {
		v := top * int64(i) / 4
		c.Ticks = append(c.Ticks, ChartText{X: plotL - 6, Y: y(v) + 4, Text: fmt.Sprint(v)})
		c.RightTicks = append(c.RightTicks, ChartText{X: plotR + 6, Y: y(v) + 4, Text: fmt.Sprintf("%d%%", i*25)})
	}
	groupW := float64(plotR-plotL) / float64(len(rounds))
	barW := (groupW*(1-groupGap) - barGap*(barsPerGroup-1)) / barsPerGroup
	var pts []string
	var summary []string
	for i, r := range rounds {
		st := r.Stats
		st.Rates()
		x0 := float64(plotL) + groupW*float64(i) + groupW*groupGap/2
		for j, b := range []struct {
			v     int64
			class string
			name  string
		}{{st.Collected, "c-collected", "collected"}, {st.Fooled, "c-fooled", "fooled"}, {st.VerifiedFooled, "c-verified", "verified fooled"}} {
			x := x0 + float64(j)*(barW+barGap)
			c.Bars = append(c.Bars, ChartBar{X: x, Y: y(b.v), W: barW, H: float64(plotB) - y(b.v), Class: b.class,
				Title: fmt.Sprintf("Round %d: %d %s", r.Number, b.v, b.name)})
		}
		cx := float64(plotL) + groupW*(float64(i)+0.5)
		cy := float64(plotB) - plotH*st.VMER
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", cx, cy))
		c.VMERDots = append(c.VMERDots, ChartDot{X: cx, Y: cy, Title: fmt.Sprintf("Round %d: vMER %.1f%%", r.Number, 100*st.VMER)})
		c.Labels = append(c.Labels, ChartText{X: cx, Y: plotB + 18, Text: fmt.Sprintf("R%d", r.Number)})
		summary = append(summary, fmt.Sprintf("round %d: %d collected, %d fooled, %d verified fooled, vMER %.1f%%",
			r.Number, st.Collected, st.Fooled, st.VerifiedFooled, 100*st.VMER))
	}
	c.VMERLine = strings.Join(pts, " ")
	c.Summary = strings.Join(summary, "; ")
	return c
}

// niceCeil rounds a maximum up to 4 × a round step, so the axis has whole ticks.
func niceCeil(v int64) int64 {
	if v <= 4 {
		return 4
	}
	step := int64(1)
	for step*4*10 <= v {
		step *= 10
	}
	for _, m := range []int64{1, 2, 5, 10} {
		if step*m*4 >= v {
			return step * m * 4
		}
	}
	return step * 40
}
