package svgchart

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// TestSVGIsWellFormedAndEscaped: the chart parses as XML, has one line per
// series, and a name with markup in it is text, not an element.
func TestSVGIsWellFormedAndEscaped(t *testing.T) {
	c := Chart{Title: "latency", XLabel: "µs", YLabel: "fraction", LogX: true, Series: []Series{
		{Name: `<script>alert("x")</script>`, Points: CDF([]float64{10, 20, 30, 400, 5000}, 100)},
		{Name: "one", Points: []Point{{X: 7, Y: 1}}},
		{Name: "none"},
	}}
	s := c.SVG()
	if strings.Contains(s, "<script") {
		t.Fatalf("a series name reached the SVG as markup:\n%s", s)
	}
	d := xml.NewDecoder(strings.NewReader(s))
	elems := map[string]int{}
	var texts []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, s)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			elems[tok.Name.Local]++
		case xml.CharData:
			texts = append(texts, string(tok))
		}
	}
	if elems["polyline"] != 1 || elems["circle"] != 1 {
		t.Errorf("want one polyline and one circle, got %v", elems)
	}
	if !strings.Contains(strings.Join(texts, "|"), `<script>alert("x")</script>`) {
		t.Errorf("the series name is not shown as text: %q", texts)
	}
}

// TestCDF: the points are at most n, rise to 1, and start at the least.
func TestCDF(t *testing.T) {
	v := make([]float64, 1000)
	for i := range v {
		v[i] = float64(i + 1)
	}
	pts := CDF(v, 50)
	if len(pts) != 50 || pts[0].X != 1 || pts[49].X != 1000 || pts[49].Y != 1 {
		t.Fatalf("CDF: %d points, first %v, last %v", len(pts), pts[0], pts[len(pts)-1])
	}
	for i := 1; i < len(pts); i++ {
		if pts[i].X < pts[i-1].X || pts[i].Y < pts[i-1].Y {
			t.Fatalf("not monotone at %d: %v then %v", i, pts[i-1], pts[i])
		}
	}
	if CDF(nil, 10) != nil {
		t.Error("CDF of nothing is not empty")
	}
}
