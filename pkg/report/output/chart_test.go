package output

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
)

// longNamesReport has the strategy names no chart layout expects: long
// ones, a one-letter one, seven of them and three modes, in two targets.
func longNamesReport(t testing.TB) *report.Report {
	t.Helper()
	return reportOf(t, report.Options{}, "../testdata/long-names.csv")
}

// workloadsReport is the report of testdata/workloads.csv: two
// workloads, one of which the kvstore does not support, beside a mode.
func workloadsReport(t testing.TB) *report.Report {
	t.Helper()
	return reportOf(t, report.Options{}, workloadFiles...)
}

// chartCases are the reports the chart tests draw.
func chartCases(t *testing.T) map[string]*report.Report {
	return map[string]*report.Report{"seed000": seedReport(t, report.Options{}), "long-names": longNamesReport(t), "workloads": workloadsReport(t)}
}

// TestChartInBrowser renders the SVG in headless Chromium twice, once
// with the machine's fonts and once with no font at all, and requires the
// same pixels, neither screenshot blank: the chart does not depend on the
// fonts of whoever opens it. Without Chromium it is skipped, unless
// KVBENCH_REQUIRE_CHROMIUM is set (make chart-check sets it).
func TestChartInBrowser(t *testing.T) {
	chromium := testutil.RequireChromium(t)
	dir := t.TempDir()
	noFonts := filepath.Join(dir, "fonts.conf")
	conf := `<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig><cachedir>` + dir + `/fc</cachedir></fontconfig>`
	if err := os.WriteFile(noFonts, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, rep := range chartCases(t) {
		t.Run(name, func(t *testing.T) {
			var svg bytes.Buffer
			if err := WriteChart(&svg, rep, render.ChartSVG); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, name+".svg")
			if err := os.WriteFile(file, svg.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			w, h := svgSize(t, svg.Bytes())
			withFonts := screenshot(t, chromium, file, w, h, "")
			without := screenshot(t, chromium, file, w, h, noFonts)
			if diff := differentPixels(withFonts, without); diff > 0 {
				t.Errorf("%d pixels differ between the screenshots with and without the machine's fonts (%s)", diff, dir)
			}
			checkNotBlank(t, withFonts)
		})
	}
}

// svgSize is the SVG's size in CSS pixels, rounded up.
func svgSize(t *testing.T, svg []byte) (int, int) {
	m := regexp.MustCompile(`<svg width="([0-9.]+)pt" height="([0-9.]+)pt"`).FindSubmatch(svg)
	if m == nil {
		t.Fatalf("no size in %.200s", svg)
	}
	px := func(b []byte) int {
		v, _ := strconv.ParseFloat(string(b), 64)
		return int(math.Ceil(v * 96 / 72))
	}
	return px(m[1]), px(m[2])
}

// screenshot renders file in headless Chromium, with fontconfig's
// configuration from fontsConf when set.
func screenshot(t *testing.T, chromium, file string, w, h int, fontsConf string) image.Image {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var outErr bytes.Buffer
	err := testutil.RunBrowser(t, func() *exec.Cmd {
		outErr.Reset()
		cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
			"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--hide-scrollbars", "--force-device-scale-factor=1", "--user-data-dir="+filepath.Join(dir, "profile"),
			"--screenshot="+out, fmt.Sprintf("--window-size=%d,%d", w, h), "file://"+file)
		cmd.Env = os.Environ()
		if fontsConf != "" {
			cmd.Env = append(cmd.Env, "FONTCONFIG_FILE="+fontsConf)
		}
		cmd.Stdout, cmd.Stderr = &outErr, &outErr
		return cmd
	})
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, outErr.String())
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// differentPixels counts the pixels that differ (all of them when the
// sizes differ).
func differentPixels(a, b image.Image) int {
	if a.Bounds() != b.Bounds() {
		return a.Bounds().Dx() * a.Bounds().Dy()
	}
	n := 0
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 {
				n++
			}
		}
	}
	return n
}

// checkNotBlank requires a drawing: the bars' colours and dark text.
func checkNotBlank(t *testing.T, img image.Image) {
	t.Helper()
	counts := make(map[string]int)
	near := func(c color.Color, want color.Color) bool {
		r1, g1, b1, _ := c.RGBA()
		r2, g2, b2, _ := want.RGBA()
		d := func(x, y uint32) bool { return max(x, y)-min(x, y) < 0x0800 }
		return d(r1, r2) && d(g1, g2) && d(b1, b2)
	}
	total := 0
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			c := img.At(x, y)
			total++
			switch {
			case near(c, render.Palette[0]):
				counts["set bars"]++
			case near(c, render.Palette[1]):
				counts["get bars"]++
			case near(c, color.Black):
				counts["black"]++
			}
		}
	}
	// Bars cover far more of the canvas than the letters do: a bar colour
	// must fill a 500th of it, the black of the text and marks a 2000th.
	for what, least := range map[string]int{"set bars": total / 500, "get bars": total / 500, "black": total / 2000} {
		if counts[what] < least {
			t.Errorf("%s: %d of %d pixels; the screenshot looks blank: %v", what, counts[what], total, counts)
		}
	}
	if !strings.Contains(fmt.Sprint(img.Bounds()), "(0,0)") {
		t.Errorf("bounds %v", img.Bounds())
	}
}
