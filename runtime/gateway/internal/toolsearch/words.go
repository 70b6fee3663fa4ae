package toolsearch

import "sync"

// stopWords are left out of tools and queries alike: they are in nearly
// every description and every sentence a user types, and say nothing of
// which tool is meant.
var stopWords = set(
	"a", "an", "the", "of", "to", "in", "on", "for", "with", "and", "or", "is", "are", "be", "been",
	"this", "that", "these", "those", "it", "its", "me", "my", "i", "you", "your", "we", "our",
	"what", "whats", "s", "t", "from", "by", "at", "as", "can", "could", "do", "does", "please",
	"how", "which", "into", "there", "about", "some", "any", "will", "would", "should", "if",
	"then", "than", "so", "not", "no", "but", "up", "out", "just", "also", "when", "where", "who",
	"was", "were", "has", "have", "had", "let", "lets", "want", "need", "like", "using", "use",
)

// synonymGroups are words of general computing and everyday speech that
// users say for one another: a query word finds the others of its
// groups (at weightSynonym). They are about tools in general, not about
// any one catalog; a word in several groups widens to all of them.
var synonymGroups = [][]string{
	{"folder", "directory", "dir"},
	{"delete", "remove", "erase", "forget", "drop", "destroy"},
	{"search", "find", "lookup", "locate", "query", "look"},
	{"create", "make", "new"},
	{"add", "sum", "plus", "total"},
	{"read", "get", "show", "view", "open", "fetch", "display", "load", "see"},
	{"write", "save", "store", "put"},
	{"edit", "modify", "change", "update", "replace", "patch"},
	{"move", "rename", "mv"},
	{"list", "enumerate", "ls", "contents"},
	{"image", "picture", "photo", "media", "png"},
	{"environment", "env", "variables"},
	{"compress", "zip", "gzip", "archive"},
	{"size", "big", "large", "bytes"},
	{"metadata", "info", "information", "details", "stat"},
	{"remember", "memory", "memorize", "recall", "knowledge"},
	{"fact", "observation", "note"},
	{"person", "people", "entity", "someone"},
	{"relation", "relationship", "link", "connection"},
	{"wait", "sleep", "pause", "delay"},
	{"crash", "panic", "fail"},
	{"print", "stdout", "output"},
	{"log", "logging", "logs"},
	{"llm", "model", "sampling", "completion", "complete"},
	{"ask", "elicit", "elicitation", "prompt"},
	{"tree", "hierarchy", "recursive", "nested"},
	{"run", "execute", "trigger", "start"},
	{"subscribe", "subscription", "watch", "follow"},
}

// synonyms is synonymGroups by stemmed word, made on first use: every
// mcprt process links this package, few search (0.1 ms and 40 KB of each
// start-up, by GODEBUG=inittrace=1).
var synonyms = sync.OnceValue(func() map[string][]string {
	m := map[string][]string{}
	for _, g := range synonymGroups {
		for _, w := range g {
			sw := stem(w)
			for _, o := range g {
				if so := stem(o); so != sw && !contains(m[sw], so) {
					m[sw] = append(m[sw], so)
				}
			}
		}
	}
	return m
})

func contains(l []string, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
