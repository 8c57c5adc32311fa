package output

import (
	"fmt"
	"math"
	"strconv"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/stats"
)

// persistJobs writes the persistence job tables (one per target and
// mode) and the targets side by side, if any.
func (m *md) persistJobs(r *report.Report) {
	if len(r.PersistJobs) == 0 {
		return
	}
	pl := render.PersistJobLabelsOf(r.Options.Lang)
	l := m.l
	m.Printf("\n## %s\n", pl.Title)
	for _, tab := range r.PersistJobs {
		m.Printf("\n### %s, %s\n\n", tab.Target, tab.Mode)
		var rows [][]string
		for _, row := range tab.Rows {
			rec := row.RecoveryS.String()
			if row.NotRecovered > 0 {
				rec += " (" + fmt.Sprintf(pl.NotBack, row.NotRecovered, row.Rounds) + ")"
			}
			rows = append(rows, []string{row.Strategy, row.Job, strconv.Itoa(row.Rounds), row.JobS.String(), row.ForkMs.String(),
				row.CowMB.String(), row.RSSRatio.String(), row.P99Ratio.String(), row.P99BeforeUs.String(),
				row.LongestStallMs.String(), rec, verdictCell(row.P, row.Significant)})
		}
		m.Table([]string{l.Strategy, pl.Job, pl.Rounds, pl.JobS, pl.ForkMs, pl.CowMB, pl.RSS, pl.P99, pl.P99Before, pl.Stall, pl.Recovery, pl.Vs},
			"llrrrrrrrrrl", rows)
	}
	m.Printf("\n"+pl.Legend+"\n", r.Options.Alpha)
	for _, side := range r.PersistJobSides {
		m.Printf("\n### "+pl.SideTitle+"\n\n", side.Job, side.Mode, side.Reference)
		header, align := []string{l.Persistence}, "l"
		for _, t := range side.Targets {
			header, align = append(header, t), align+"l"
			if t != side.Reference {
				header, align = append(header, fmt.Sprintf(pl.SideRatio, side.Reference)), align+"r"
			}
		}
		var rows [][]string
		for _, row := range side.Rows {
			cells := []string{row.Persistence}
			for i, c := range row.Cells {
				cell := "-"
				if c.Strategy != "" {
					cell = c.Strategy + " " + c.P99Ratio.String()
				}
				cells = append(cells, cell)
				if side.Targets[i] != side.Reference {
					cells = append(cells, c.Ratio.String())
				}
			}
			rows = append(rows, cells)
		}
		m.Table(header, align, rows)
	}
	if len(r.PersistJobSides) > 0 {
		m.Printf("\n"+pl.SideLegend+"\n", r.PersistJobSides[0].Reference, r.Options.Alpha)
	}
}

// verdictCell is a U test's cell: the p-value, "~ (p)" when not
// significant, "-" when not tested.
func verdictCell(p report.Prob, significant bool) string {
	if math.IsNaN(float64(p)) {
		return "-"
	}
	if !significant {
		return "~ (" + p.String() + ")"
	}
	return p.String()
}

// serverEvents writes the server events seen inside the measured phases,
// from the series CSV, if any.
func (m *md) serverEvents(r *report.Report) {
	evs := r.ServerEvents()
	if len(evs) == 0 {
		return
	}
	pl := render.PersistJobLabelsOf(r.Options.Lang)
	l := m.l
	m.Printf("\n## %s\n\n", pl.EventsTitle)
	var rows [][]string
	for _, e := range evs {
		rows = append(rows, []string{e.Target, e.Strategy, e.Mode, strconv.Itoa(e.Round), strconv.Itoa(e.Attempt), e.Event,
			strconv.Itoa(e.Intervals), stats.Format2(e.FromS), stats.Format2(e.ToS)})
	}
	m.Table([]string{l.Target, l.Strategy, l.Mode, l.RoundCol, l.Attempt, pl.Event, pl.Intervals, pl.From, pl.To}, "lllrrlrrr", rows)
	m.Printf("\n%s\n", pl.EventsLegend)
}

// heatmapPictures draws the heatmap of every ok round with a persistence
// job (report.Heatmaps).
func heatmapPictures(r *report.Report) ([]render.Picture, error) {
	hms, err := r.Heatmaps()
	if err != nil {
		return nil, err
	}
	pl := render.PersistJobLabelsOf(r.Options.Lang)
	var pics []render.Picture
	for _, h := range hms {
		hp := render.HeatmapPlot{
			Title:  fmt.Sprintf("%s/%s %s round %d: latency per interval", h.Target, h.Strategy, h.Mode, h.Round),
			Starts: h.Starts, Ends: h.Ends, BoundsUs: h.BoundsUs, Counts: h.Counts,
		}
		for _, s := range h.Spans {
			hp.Spans = append(hp.Spans, render.Span{From: s[0], To: s[1], Name: h.Job + " job"})
		}
		svg, ok, err := hp.SVG()
		if err != nil {
			return nil, fmt.Errorf("heatmap of %s/%s/%s round %d: %w", h.Target, h.Strategy, h.Mode, h.Round, err)
		}
		if ok {
			pics = append(pics, render.Picture{Title: fmt.Sprintf(pl.Heatmap, h.Target, h.Strategy, h.Mode, h.Round, h.Job), SVG: svg})
		}
	}
	return pics, nil
}
