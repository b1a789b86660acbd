package web

import (
	"fmt"
	"math"
	"strings"

	"github.com/dynabench-go/dynabench/internal/service"
)

// CycleChart is the "each round is harder" view of a task, server-rendered as two SVGs: a line per
// round's model in the loop over the released test splits (x: the test split's round, y: the perf
// metric in %), and a bar per round for its vMER. Like Chart, it uses presentation attributes and CSS
// classes only. Rows is the same data as a table.
type CycleChart struct {
	Metric string
	Tested []int
	// The score panel.
	Width, Height                            int
	PlotLeft, PlotRight, PlotTop, PlotBottom float64
	YTicks                                   []ChartText
	Grid                                     []float64
	XLabels                                  []ChartText
	Lines                                    []CycleLine
	Summary                                  string
	// The vMER panel.
	VWidth, VHeight int
	VPlotLeft       float64
	VPlotRight      float64
	VPlotBottom     float64
	VTicks          []ChartText
	VGrid           []float64
	VBars           []ChartBar
	VLabels         []ChartText
	VValues         []ChartText
	VSummary        string
	// The table.
	Rows   []cycleRow
	Scored bool // some model has a score on some test split
}

// CycleLine is one round's model across the test splits.
type CycleLine struct {
	Class  string // s0…s5: colour and dash pattern
	Round  int
	Model  string
	Points string
	Dots   []CycleDot
}

// CycleDot is one score; Own marks the model on its own round's test split.
type CycleDot struct {
	X, Y  float64
	Own   bool
	Title string
}

type cycleRow struct {
	Round  int
	Status string
	Model  string
	Class  string
	Scores []string // per tested round, "–" when not scored
	VMER   float64
}

const (
	cycW, cycH                 = 400, 250
	cycL, cycR, cycT, cycB     = 46, 384, 14, 214
	vmerW, vmerH               = 260, 170
	vmerL, vmerR, vmerT, vmerB = 46, 248, 22, 136
	cycleSeries                = 6
	cycleMaxModelName          = 28
	cycleXPad                  = 34
)

// cycleChart lays out the cycle; nil when no round has a released test split yet.
func cycleChart(c *service.Cycle) *CycleChart {
	if c == nil || len(c.Tested) == 0 {
		return nil
	}
	ch := &CycleChart{Metric: c.Metric, Tested: c.Tested, Width: cycW, Height: cycH, PlotLeft: cycL, PlotRight: cycR, PlotTop: cycT, PlotBottom: cycB,
		VWidth: vmerW, VHeight: vmerH, VPlotLeft: vmerL, VPlotRight: vmerR, VPlotBottom: vmerB}
	plotH := float64(cycB - cycT)
	y := func(pct float64) float64 { return cycB - plotH*math.Min(math.Max(pct, 0), 100)/100 }
	for v := 0; v <= 100; v += 25 {
		ch.YTicks = append(ch.YTicks, ChartText{X: cycL - 6, Y: y(float64(v)) + 4, Text: fmt.Sprintf("%d%%", v)})
		ch.Grid = append(ch.Grid, y(float64(v)))
	}
	// The test splits, evenly spaced, with room at both ends.
	x := map[int]float64{}
	span := float64(cycR - cycL - 2*cycleXPad)
	for i, n := range c.Tested {
		xi := float64(cycL+cycR) / 2
		if len(c.Tested) > 1 {
			xi = float64(cycL+cycleXPad) + span*float64(i)/float64(len(c.Tested)-1)
		}
		x[n] = xi
		ch.XLabels = append(ch.XLabels, ChartText{X: xi, Y: cycB + 18, Text: fmt.Sprintf("R%d test", n)})
	}
	var summary []string
	for i, r := range c.Rounds {
		model := "no model"
		if len(r.Models) > 0 {
			model = r.Models[0].Name
		}
		class := fmt.Sprintf("s%d", i%cycleSeries)
		row := cycleRow{Round: r.Round, Status: r.Status, Model: model, Class: class, VMER: r.VMER}
		line := CycleLine{Class: class, Round: r.Round, Model: shorten(model, cycleMaxModelName)}
		var pts, said []string
		for _, n := range c.Tested {
			v, ok := r.Scores[n]
			if !ok {
				row.Scores = append(row.Scores, "–")
				continue
			}
			row.Scores = append(row.Scores, fmt.Sprintf("%.1f%%", v))
			d := CycleDot{X: x[n], Y: y(v), Own: n == r.Round,
				Title: fmt.Sprintf("Round %d's model %s on round %d's test split: %.1f%%", r.Round, model, n, v)}
			line.Dots = append(line.Dots, d)
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", d.X, d.Y))
			said = append(said, fmt.Sprintf("%.1f%% on round %d", v, n))
		}
		ch.Rows = append(ch.Rows, row)
		if len(line.Dots) > 0 {
			line.Points = strings.Join(pts, " ")
			ch.Lines = append(ch.Lines, line)
			ch.Scored = true
			summary = append(summary, fmt.Sprintf("round %d's model %s: %s", r.Round, model, strings.Join(said, ", ")))
		}
	}
	if ch.Scored {
		ch.Summary = "Perf metric " + c.Metric + " of each round's model in the loop on the released test splits: " + strings.Join(summary, "; ") + "."
	} else {
		ch.Summary = "No model in the loop is scored on a released test split yet."
	}
	ch.vmer(c)
	return ch
}

// vmer lays out the vMER panel: one bar per round, the axis up to a round 10 %.
func (ch *CycleChart) vmer(c *service.Cycle) {
	top := 0.1
	for _, r := range c.Rounds {
		top = math.Max(top, math.Ceil(r.VMER*10-1e-9)/10)
	}
	plotH := float64(vmerB - vmerT)
	y := func(v float64) float64 { return vmerB - plotH*math.Min(math.Max(v, 0), top)/top }
	for i := 0; i <= 2; i++ {
		v := top * float64(i) / 2
		ch.VTicks = append(ch.VTicks, ChartText{X: vmerL - 6, Y: y(v) + 4, Text: trimFloat(100*v) + "%"})
		ch.VGrid = append(ch.VGrid, y(v))
	}
	n := len(c.Rounds)
	if n == 0 {
		return
	}
	groupW := float64(vmerR-vmerL) / float64(n)
	barW := math.Min(groupW*0.6, 48)
	var said []string
	for i, r := range c.Rounds {
		cx := vmerL + groupW*(float64(i)+0.5)
		b := ChartBar{X: cx - barW/2, Y: y(r.VMER), W: barW, H: vmerB - y(r.VMER), Class: "c-vbar",
			Title: fmt.Sprintf("Round %d: vMER %.1f%%", r.Round, 100*r.VMER)}
		ch.VBars = append(ch.VBars, b)
		ch.VLabels = append(ch.VLabels, ChartText{X: cx, Y: vmerB + 18, Text: fmt.Sprintf("R%d", r.Round)})
		ch.VValues = append(ch.VValues, ChartText{X: cx, Y: b.Y - 5, Text: fmt.Sprintf("%.0f%%", 100*r.VMER)})
		said = append(said, fmt.Sprintf("round %d %.1f%%", r.Round, 100*r.VMER))
	}
	ch.VSummary = "vMER per round: " + strings.Join(said, ", ") + "."
}

// TestedLabels are the table's score column headings.
func (ch *CycleChart) TestedLabels() []string {
	out := make([]string, len(ch.Tested))
	for i, n := range ch.Tested {
		out[i] = fmt.Sprintf("R%d test", n)
	}
	return out
}

// MidX and MidY are the middle of the score panel.
func (ch *CycleChart) MidX() float64 { return (ch.PlotLeft + ch.PlotRight) / 2 }

// MidY is the vertical middle of the score panel.
func (ch *CycleChart) MidY() float64 { return (ch.PlotTop + ch.PlotBottom) / 2 }

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
