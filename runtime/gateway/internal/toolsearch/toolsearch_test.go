package toolsearch

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

func terms(text string) []string {
	var out []string
	forTerms(text, func(t string) bool { out = append(out, t); return true })
	return out
}

func TestTerms(t *testing.T) {
	for in, want := range map[string]string{
		"read_text_file":           "read text fil",
		"readTextFile":             "read text fil",
		"read-text-file":           "read text fil",
		"fs__list_directory":       "fs list directory",
		"HTTPServer getURLs":       "http server get url",
		"file2json":                "fil 2 json",
		"Create multiple entities": "creat multipl entity",
		"created creating creates": "creat creat creat",
		"running listed boxes":     "run list box",
		"What's in a folder?":      "folder",
		"Überprüfen größe":         "überprüfen größ",
	} {
		if got := strings.Join(terms(in), " "); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestSearch(t *testing.T) {
	docs := []Doc{
		{Name: "a__read_file", Description: "Reads a file."},
		{Name: "a__write_file", Description: "Writes a file."},
		{Name: "b__read_file", Description: "Reads a file too."},
		{Name: "c__sum", Description: "Adds numbers.", InputSchema: []byte(`{"type":"object","properties":{"numbers":{"type":"array","description":"the addends"}}}`)},
	}
	x := New(docs)
	if x.Len() != 4 {
		t.Fatalf("Len %d", x.Len())
	}
	hits := x.Search("read a file", 10, nil)
	if len(hits) != 3 || hits[0].Doc != 0 || hits[1].Doc != 2 || hits[2].Doc != 1 {
		t.Errorf("read a file: %v", hits)
	}
	// keep hides a tool, which is then never found.
	hits = x.Search("read a file", 10, func(d int) bool { return d != 0 })
	if slices.ContainsFunc(hits, func(h Hit) bool { return h.Doc == 0 }) || len(hits) != 2 {
		t.Errorf("kept: %v", hits)
	}
	if hits := x.Search("read a file", 1, nil); len(hits) != 1 {
		t.Errorf("limit 1: %v", hits)
	}
	// An argument's description is searched; a synonym finds its word.
	if hits := x.Search("addends", 5, nil); len(hits) != 1 || hits[0].Doc != 3 {
		t.Errorf("addends: %v", hits)
	}
	if hits := x.Search("total", 5, nil); len(hits) != 1 || hits[0].Doc != 3 {
		t.Errorf("total (sum): %v", hits)
	}
	for _, q := range []string{"", "the of a", "zzz"} {
		if hits := x.Search(q, 5, nil); len(hits) != 0 {
			t.Errorf("%q: %v", q, hits)
		}
	}
	var empty *Index
	if empty.Search("x", 5, nil) != nil || New(nil).Search("read", 5, nil) != nil {
		t.Error("an empty index found something")
	}
}

// catalogOf returns n tools: the real catalog, repeated under other
// prefixes, as a gateway of many backends of the same kinds would offer.
func catalogOf(t testing.TB, n int) []Doc {
	base := loadCatalog(t)
	docs := make([]Doc, 0, n)
	for i := 0; len(docs) < n; i++ {
		d := base[i%len(base)]
		_, tool, _ := strings.Cut(d.Name, "__")
		d.Name = fmt.Sprintf("s%02d__%s", i/len(base), tool)
		docs = append(docs, d)
	}
	return docs
}

// BenchmarkSearch1000 is a search of the relevance set's queries, in
// turn, over 1,000 tools; it reports the index's bytes per tool.
//
//	go test ./runtime/gateway/internal/toolsearch -run '^$' -bench Search1000 -benchmem
func BenchmarkSearch1000(b *testing.B) {
	docs := catalogOf(b, 1000)
	x := New(docs)
	perTool := float64(indexBytes(b, docs)) / float64(len(docs))
	for i := 0; b.Loop(); i++ {
		x.Search(relevance[i%len(relevance)].query, 5, nil)
	}
	b.ReportMetric(perTool, "index-B/tool")
}

// BenchmarkBuild1000 is a rebuild of the index of 1,000 tools, as the
// gateway makes after a backend's tools change.
func BenchmarkBuild1000(b *testing.B) {
	docs := catalogOf(b, 1000)
	for b.Loop() {
		New(docs)
	}
}

// indexBytes is the heap an index of docs holds: the median of three
// measures, since one GC cycle's figure may be off by what another
// goroutine freed or allocated meanwhile.
func indexBytes(t testing.TB, docs []Doc) uint64 {
	var m [3]uint64
	for i := range m {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		x := New(docs)
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(x)
		m[i] = after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
	}
	slices.Sort(m[:])
	return m[1]
}

// TestLatency1000 logs the search latency's percentiles over 1,000 tools
// and the index's memory, the figures of test/bench/RESULTS.md:
//
//	go test ./runtime/gateway/internal/toolsearch -run Latency1000 -v
//
// It asserts only loosely (race detector and shared CPUs slow it).
func TestLatency1000(t *testing.T) {
	docs := catalogOf(t, 1000)
	at := time.Now()
	x := New(docs)
	build := time.Since(at)
	var took []time.Duration
	for round := 0; round < 20; round++ {
		for _, q := range relevance {
			at := time.Now()
			x.Search(q.query, 5, nil)
			took = append(took, time.Since(at))
		}
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	p50, p99 := took[len(took)/2], took[len(took)*99/100]
	mem := indexBytes(t, docs)
	t.Logf("1,000 tools: search p50 %v, p99 %v (%d searches); build %v; index %d bytes (%d per tool)",
		p50, p99, len(took), build, mem, mem/uint64(len(docs)))
	if p50 > 20*time.Millisecond {
		t.Errorf("search p50 %v", p50)
	}
}
