// Package toolsearch ranks tools for a query typed in words, so that a
// gateway can offer a search instead of a catalog of every tool of every
// backend (which costs a model's context tens of kilobytes it mostly
// never uses).
//
// The ranking is BM25F: BM25 (Robertson and Zaragoza's probabilistic
// relevance framework) over one weighted bag of terms per tool, where a
// term found in the tool's name counts more than one in its title, which
// counts more than one in its description or its arguments'. Names are
// split on '_', '-', '.', "__" and camelCase, so that "read_text_file",
// "readTextFile" and "read-text-file" are the same three words. Words are
// lower-cased, stripped of common English suffixes (a light stemmer: files
// and file, listing and list meet) and of stop words, and a query's words
// are widened by a small thesaurus of general computing synonyms (folder
// finds directory), counted at half weight so that the user's own word
// still ranks first.
//
// An Index is immutable once built: a gateway builds a new one when its
// tools change, and searches it from any goroutine.
package toolsearch

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Doc is what the index reads of one tool.
type Doc struct {
	Name        string
	Title       string
	Description string
	// InputSchema and OutputSchema are the tool's JSON Schemas: the names
	// and descriptions of their properties (one level of nesting deep)
	// are indexed, since a user often says what a tool takes or gives
	// ("the weather for a city") rather than what it is called.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
}

// The fields' weights: how much one occurrence of a term counts in each.
// A name is short and chosen to say what the tool does; a description is
// long and says much else besides.
const (
	weightName       = 3.0
	weightTitle      = 2.0
	weightDesc       = 1.0
	weightArgName    = 1.0
	weightArgDesc    = 0.5
	weightOutput     = 0.3
	weightSynonym    = 0.5 // a query term the thesaurus added
	bm25K1           = 1.2
	bm25B            = 0.75
	maxDescTermCount = 400 // terms read of one description, against a tool that pastes a manual
)

// posting is one tool's weighted frequency of a term.
type posting struct {
	doc uint32
	tf  float32
}

// Index is a built index. The zero value finds nothing.
type Index struct {
	n        int
	lens     []float32 // each tool's weighted length
	avgLen   float32
	postings map[string][]posting
}

// Hit is one tool a search found.
type Hit struct {
	Doc   int // its index in the docs New was given
	Score float64
}

// New indexes docs; a Hit's Doc is an index into them.
func New(docs []Doc) *Index {
	x := &Index{n: len(docs), lens: make([]float32, len(docs)), postings: map[string][]posting{}}
	var total float64
	tf := map[string]float32{}
	for i, d := range docs {
		clear(tf)
		add := func(text string, w float32, limit int) {
			n := 0
			forTerms(text, func(t string) bool {
				tf[t] += w
				n++
				return limit <= 0 || n < limit
			})
		}
		add(d.Name, weightName, 0)
		add(d.Title, weightTitle, 0)
		add(d.Description, weightDesc, maxDescTermCount)
		schemaTerms(d.InputSchema, func(name, desc string) {
			add(name, weightArgName, 0)
			add(desc, weightArgDesc, maxDescTermCount)
		})
		schemaTerms(d.OutputSchema, func(name, desc string) {
			add(name, weightOutput, 0)
			add(desc, weightOutput, maxDescTermCount)
		})
		var l float32
		for t, f := range tf {
			x.postings[t] = append(x.postings[t], posting{uint32(i), f})
			l += f
		}
		x.lens[i] = l
		total += float64(l)
	}
	if x.n > 0 {
		x.avgLen = float32(total / float64(x.n))
	}
	// Each posting list was appended to by growing; trim what growth left
	// over, since an index lives as long as its catalog.
	for t, ps := range x.postings {
		x.postings[t] = slices.Clip(ps)
	}
	return x
}

// Len is the number of tools indexed.
func (x *Index) Len() int { return x.n }

// Search returns up to limit tools for query, best first, among those
// keep accepts (nil: all). Tools that share no term with the query are
// not returned. Ties are broken by the order of the docs.
func (x *Index) Search(query string, limit int, keep func(doc int) bool) []Hit {
	if x == nil || x.n == 0 || limit <= 0 {
		return nil
	}
	terms := queryTerms(query)
	if len(terms) == 0 {
		return nil
	}
	scores := make([]float64, x.n)
	var touched []int
	for _, q := range terms {
		ps := x.postings[q.term]
		if len(ps) == 0 {
			continue
		}
		// BM25's idf, in the form that stays positive for a term in most
		// of a small catalog (a backend prefix is in a third of it).
		idf := math.Log(1 + (float64(x.n)-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			norm := bm25K1 * (1 - bm25B + bm25B*float64(x.lens[p.doc])/float64(x.avgLen))
			if scores[p.doc] == 0 {
				touched = append(touched, int(p.doc))
			}
			scores[p.doc] += q.weight * idf * tf * (bm25K1 + 1) / (tf + norm)
		}
	}
	hits := make([]Hit, 0, min(len(touched), 4*limit))
	for _, d := range touched {
		if keep != nil && !keep(d) {
			continue
		}
		hits = append(hits, Hit{d, scores[d]})
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Doc, b.Doc))
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// queryTerm is one term of a query with its weight.
type queryTerm struct {
	term   string
	weight float64
}

// queryTerms reads a query: its terms at weight 1 (a term said twice
// counts twice, as the user stressed it), and their synonyms at
// weightSynonym unless the user said them too.
func queryTerms(query string) []queryTerm {
	var own []string
	forTerms(query, func(t string) bool {
		own = append(own, t)
		return len(own) < 64
	})
	out := make([]queryTerm, 0, 2*len(own))
	for _, t := range own {
		out = append(out, queryTerm{t, 1})
	}
	for _, t := range own {
		for _, s := range synonyms()[t] {
			if !slices.Contains(own, s) && !slices.ContainsFunc(out, func(q queryTerm) bool { return q.term == s }) {
				out = append(out, queryTerm{s, weightSynonym})
			}
		}
	}
	return out
}

// schemaTerms calls fn with the name and description of each property of
// a JSON Schema, and of the properties of an object property or of an
// array's items, one level down.
func schemaTerms(raw json.RawMessage, fn func(name, desc string)) {
	if len(raw) == 0 {
		return
	}
	type schema struct {
		Description string                     `json:"description"`
		Properties  map[string]json.RawMessage `json:"properties"`
		Items       json.RawMessage            `json:"items"`
	}
	var top schema
	if json.Unmarshal(raw, &top) != nil {
		return
	}
	for _, name := range sortedKeys(top.Properties) {
		var p schema
		_ = json.Unmarshal(top.Properties[name], &p)
		fn(name, p.Description)
		inner := p.Properties
		if len(p.Items) > 0 {
			var it schema
			if json.Unmarshal(p.Items, &it) == nil {
				inner = it.Properties
				if it.Description != "" {
					fn("", it.Description)
				}
			}
		}
		for _, n := range sortedKeys(inner) {
			var q schema
			_ = json.Unmarshal(inner[n], &q)
			fn(n, q.Description)
		}
	}
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// forTerms calls fn with each term of text, in order, until fn returns
// false: words split at anything but letters and digits and at camelCase
// humps, lower-cased, stemmed, stop words left out.
func forTerms(text string, fn func(string) bool) {
	var word []rune
	flush := func() bool {
		if len(word) == 0 {
			return true
		}
		w := strings.ToLower(string(word))
		word = word[:0]
		if stopWords[w] {
			return true
		}
		return fn(stem(w))
	}
	var prev rune
	for i, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			// A hump: "readFile" (lower to upper), "HTTPServer" (the
			// last upper of a run, before a lower), "file2" (letter to
			// digit and back).
			if len(word) > 0 {
				rest := text[i+utf8.RuneLen(r):]
				next, size := utf8.DecodeRuneInString(rest)
				after, _ := utf8.DecodeRuneInString(rest[size:])
				// "URLs" is one word, a plural: a single lower after an
				// upper run starts none.
				hump := unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsUpper(prev) && unicode.IsLower(next) && unicode.IsLower(after)) ||
					unicode.IsDigit(r) != unicode.IsDigit(prev)
				if hump && !flush() {
					return
				}
			}
			word = append(word, r)
		default:
			if !flush() {
				return
			}
		}
		prev = r
	}
	flush()
}

// stem strips the commonest English inflections, so that a word and its
// plural or participle meet: "files" and "file", "listing" and "list",
// "created" and "create" (both "creat"). It is deliberately light (no
// derivations: "compression" is not "compress"), since a wrong merge costs
// more in a catalog of short texts than a missed one.
func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "xes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	for _, suf := range []string{"ing", "ed"} {
		if s, ok := strings.CutSuffix(w, suf); ok && len(s) >= 3 && hasVowel(s) {
			w = s
			// "running": "runn" to "run"; but "fill", "pass", "buzz" keep theirs.
			if n := len(w); n >= 2 && w[n-1] == w[n-2] && !strings.ContainsRune("lsz", rune(w[n-1])) && !isVowel(w[n-1]) {
				w = w[:n-1]
			}
			break
		}
	}
	if len(w) > 3 && w[len(w)-1] == 'e' {
		w = w[:len(w)-1] // "write" and "writ(ing)", "create" and "creat(ed)"
	}
	return w
}

func isVowel(c byte) bool { return strings.IndexByte("aeiouy", c) >= 0 }

func hasVowel(s string) bool {
	for i := 0; i < len(s); i++ {
		if isVowel(s[i]) {
			return true
		}
	}
	return false
}
