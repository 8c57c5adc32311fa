package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/pkg/curve"
	"github.com/kvbench/kvbench/pkg/loadgen"
)

// Curve is what "kvbench bench --rates/--slo" measured: the closed-loop
// peak (when a relative rate or a search needed it), the points of the
// rate list, and the capacity search; or what a connection ramp
// (--connections-start/--connections-step) measured: its steps.
type Curve struct {
	Peak     *loadgen.Result
	Points   []curve.Point
	Capacity *curve.Capacity
	// Ramp are a connection ramp's steps, in order.
	Ramp []curve.Point
}

// WriteCurve writes c in format: FormatText, FormatJSON, or for a ramp
// FormatCSV. The JSON document is the peak's (or, without one, the last
// point's or step's) as a plain run writes it, with "curve" (the points),
// "capacity" and "ramp" after it. The CSV is RampCSVHeader's.
func WriteCurve(w io.Writer, format string, c Curve) error {
	switch format {
	case FormatJSON:
		return writeCurveJSON(w, c)
	case FormatCSV:
		if len(c.Points) > 0 || c.Capacity != nil {
			return errors.New("a rate curve has no csv form: print text or json")
		}
		return writeRampCSV(w, c.Ramp)
	}
	return writeCurveText(w, c)
}

// RampCSVHeader is a ramp's CSV header: the step's connections, then
// CSVHeader's columns, one row per step (per command and step with a
// command mix).
var RampCSVHeader = append([]string{"connections"}, CSVHeader...)

// writeRampCSV writes the ramp's steps as CSV.
func writeRampCSV(w io.Writer, steps []curve.Point) error {
	var b strings.Builder
	b.WriteString(strings.Join(RampCSVHeader, ",") + "\n")
	for _, p := range steps {
		var rows strings.Builder
		if err := writeCSV(&rows, summaryRows(p.Result), nil); err != nil {
			return err
		}
		lines := strings.Split(strings.TrimSuffix(rows.String(), "\n"), "\n")
		for _, l := range lines[1:] {
			fmt.Fprintf(&b, "%d,%s\n", p.Connections, l)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeCurveJSON(w io.Writer, c Curve) error {
	base := c.Peak
	if base == nil && len(c.Points) > 0 {
		base = &c.Points[len(c.Points)-1].Result
	}
	if base == nil && len(c.Ramp) > 0 {
		base = &c.Ramp[len(c.Ramp)-1].Result
	}
	if base == nil {
		return errors.New("nothing was measured")
	}
	doc, err := json.Marshal(*base)
	if err != nil {
		return err
	}
	extra := struct {
		Curve    *[]curve.PointJSON  `json:"curve,omitempty"`
		Capacity *curve.CapacityJSON `json:"capacity,omitempty"`
		Ramp     []curve.PointJSON   `json:"ramp,omitempty"`
	}{}
	if len(c.Ramp) > 0 {
		extra.Ramp = curve.CurveJSON(c.Ramp)
	} else {
		points := curve.CurveJSON(c.Points)
		extra.Curve = &points
	}
	if c.Capacity != nil {
		cj := c.Capacity.JSON()
		extra.Capacity = &cj
	}
	more, err := json.Marshal(extra)
	if err != nil {
		return err
	}
	// One object: the run's fields, then the curve's.
	doc = append(bytes.TrimSuffix(bytes.TrimSpace(doc), []byte("}")), ',')
	doc = append(doc, bytes.TrimPrefix(more, []byte("{"))...)
	var out bytes.Buffer
	if err := json.Indent(&out, doc, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

func writeCurveText(w io.Writer, c Curve) error {
	var b strings.Builder
	var cfg loadgen.Config
	switch {
	case c.Peak != nil:
		cfg = c.Peak.Config
	case len(c.Points) > 0:
		cfg = c.Points[0].Result.Config
	case len(c.Ramp) > 0:
		cfg = c.Ramp[0].Result.Config
	}
	if len(c.Ramp) > 0 {
		loop := "closed loop"
		if cfg.Rate > 0 {
			loop = fmt.Sprintf("open loop at %.0f req/s", cfg.Rate)
		}
		fmt.Fprintf(&b, "target: %s\nload: pipeline %d, %s, %s per step\n", cfg.Addr, cfg.Pipeline, loop, cfg.Duration)
		b.WriteString("\nconnection ramp (us):\n")
		writePoints(&b, c.Ramp, false)
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "target: %s\nload: %d connections, pipeline %d, open loop per rate\n", cfg.Addr, cfg.Connections, cfg.Pipeline)
	if p := c.Peak; p != nil {
		fmt.Fprintf(&b, "closed-loop peak: %.0f req/s, p50 %.2f us, p99 %.2f us\n", p.QPS, p.Latency.P50, p.Latency.P99)
	}
	if len(c.Points) > 0 {
		b.WriteString("\nlatency-throughput (us, from each request's intended send time):\n")
		writePoints(&b, c.Points, false)
	}
	if k := c.Capacity; k != nil {
		b.WriteString("\n")
		switch {
		case k.ClosedLoop:
			fmt.Fprintf(&b, "capacity at %s: %.0f req/s, the closed-loop peak: the objective held there, and no open loop goes faster\n", k.SLO, k.QPS)
		case k.QPS > 0:
			fmt.Fprintf(&b, "capacity at %s: %.0f req/s (held at %.0f, not at %.0f; %d steps)\n", k.SLO, k.QPS, k.Lo, k.Hi, len(k.Steps))
		default:
			fmt.Fprintf(&b, "capacity at %s: none: %v (%d steps)\n", k.SLO, k.Why, len(k.Steps))
		}
		writePoints(&b, k.Steps, true)
		for _, e := range k.Warnings {
			fmt.Fprintf(&b, "warning: %v\n", e)
		}
	}
	for _, p := range c.Points {
		if !p.Kept {
			fmt.Fprintf(&b, "warning: at %.0f req/s the requests left late (send lag p99 %.0f us): its latencies include queueing before the send, the client's or the server's backlog\n", p.Rate, p.Result.SendLagLatency.P99)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writePoints writes a table of points, against the rate or, for a
// ramp's steps, the connections; withMet adds the objective's verdict of
// a search's steps. A closed loop's send lag is not measured: its cell is
// empty.
func writePoints(b *strings.Builder, ps []curve.Point, withMet bool) {
	x := "rate"
	if len(ps) > 0 && ps[0].Connections > 0 {
		x = "connections"
	}
	fmt.Fprintf(b, "%12s %12s %10s %10s %10s %10s %14s %s\n", x, "qps", "p50", "p99", "p99.9", "max", "send lag p99", "note")
	for _, p := range ps {
		l := p.Result.Latency
		var notes []string
		if withMet {
			notes = append(notes, map[bool]string{true: "met", false: "missed"}[p.Met])
		}
		if !p.Held {
			notes = append(notes, "rate not held")
		}
		if !p.Kept {
			notes = append(notes, "behind schedule")
		}
		xv := strconv.FormatFloat(p.Rate, 'f', 0, 64)
		if x == "connections" {
			xv = strconv.Itoa(p.Connections)
		}
		lag := ""
		if p.Rate > 0 {
			lag = strconv.FormatFloat(p.Result.SendLagLatency.P99, 'f', 2, 64)
		}
		row := fmt.Sprintf("%12s %12.0f %10.2f %10.2f %10.2f %10.2f %14s %s", xv, p.Result.QPS, l.P50, l.P99, l.P999, l.Max, lag, strings.Join(notes, ", "))
		b.WriteString(strings.TrimRight(row, " ") + "\n")
	}
}
