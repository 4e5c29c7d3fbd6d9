// Package toolsearch ranks a catalog of tools against a free-text query,
// locally and deterministically: BM25F (BM25 over weighted fields) on each
// tool's name, title, description, argument names and argument
// descriptions.
//
// Text is split into words at anything that is not a letter or a digit, at
// camelCase and ACRONYMWord boundaries and between letters and digits
// ("read_text_file", "readTextFile" and "read-text-file" are the same three
// words), folded to lower case, stripped of a few English stop words and
// stemmed with the first steps of Porter's algorithm ("files", "file";
// "created", "create", "creating"), so that a query written from a task
// ("create an invoice") meets a tool named for it ("billing__new_invoice"
// described as "Creates an invoice"). A query's words also stand, at a
// lower weight, for the verbs tools are named with ("add" for "create",
// "remove" for "delete") and for a few nouns of files ("folder" for
// "directory"): see [Expand].
//
// The package also writes the search tool's texts (text.go): its
// description, and its answers, from which [Found] reads the found tools
// back out of a conversation's langchaingo messages; and it keeps the found
// set of a batch (found.go: [Set], and a search call's [Query]).
//
// The package must not import mcpadapter: it is the adapter's ranking, fed
// plain strings.
package toolsearch

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A Doc is one tool as the index sees it.
type Doc struct {
	Name        string   // the name the model calls, e.g. "files__read_text_file"
	Title       string   // the display title, if any
	Description string   // the description
	Args        []string // the argument names
	ArgText     string   // the argument descriptions, joined
}

// Field weights: a word in the name says more about a tool than the same
// word in its description. Argument names are the tool's nouns ("path",
// "issue_id"); their descriptions repeat the description's words, and
// count least.
const (
	weightName    = 3.0
	weightTitle   = 2.0
	weightArgs    = 1.5
	weightDesc    = 1.0
	weightArgText = 0.5
)

// BM25 parameters, the usual ones: k1 bounds what repeating a word adds,
// b how much a long field is discounted.
const (
	k1 = 1.2
	b  = 0.75
)

// numFields is the number of fields of a Doc.
const numFields = 5

// weights are the field weights, in the order of fieldsOf.
var weights = [numFields]float64{weightName, weightTitle, weightDesc, weightArgs, weightArgText}

// fieldsOf returns the texts of d's fields, in the order of weights.
func fieldsOf(d Doc) [numFields]string {
	return [numFields]string{d.Name, d.Title, d.Description, strings.Join(d.Args, " "), d.ArgText}
}

// A posting is a document holding a term, with the term's weighted,
// length-normalized frequency there.
type posting struct {
	doc int
	wtf float64
}

// An Index ranks the documents it was built from. It is immutable and safe
// for concurrent use.
type Index struct {
	n        int                  // documents
	postings map[string][]posting // by term, in document order
}

// New indexes docs; [Index.Search] returns positions in docs.
func New(docs []Doc) *Index {
	tokens := make([][numFields][]string, len(docs))
	var avg [numFields]float64
	for i, d := range docs {
		for f, text := range fieldsOf(d) {
			tokens[i][f] = Tokens(text)
			avg[f] += float64(len(tokens[i][f]))
		}
	}
	for f := range avg {
		avg[f] = max(avg[f]/float64(max(len(docs), 1)), 1)
	}
	ix := &Index{n: len(docs), postings: make(map[string][]posting)}
	wtf := make(map[string]float64) // of one document
	var order []string              // its terms in first-seen order, for a deterministic build
	for i := range docs {
		clear(wtf)
		order = order[:0]
		for f, toks := range tokens[i] {
			norm := 1 - b + b*float64(len(toks))/avg[f]
			for _, tok := range toks {
				if _, ok := wtf[tok]; !ok {
					order = append(order, tok)
				}
				wtf[tok] += weights[f] / norm
			}
		}
		for _, tok := range order {
			ix.postings[tok] = append(ix.postings[tok], posting{doc: i, wtf: wtf[tok]})
		}
	}
	return ix
}

// Search returns the positions of the documents that match query (share
// a word with it or with the words it stands for, see [Expand]) well
// enough, best first, at most limit of them (all when limit ≤ 0). Equal
// scores keep document order, so the result depends only on the
// documents and the query.
//
// Well enough means at or above the floors [RelativeFloor] and, when the
// query holds a word that no document holds, [AbsoluteFloor]: a document
// that matches much less than the best one, or that shares with a query
// asking for something else only words many documents hold, is filler,
// and is left out. A query that nothing matches well enough gets none.
func (ix *Index) Search(query string, limit int) []int {
	hits, unknown := ix.rank(query)
	if len(hits) == 0 {
		return nil
	}
	floor := RelativeFloor * hits[0].Score
	if unknown {
		floor = max(floor, AbsoluteFloor*ix.RareScore())
	}
	var out []int
	for _, h := range hits {
		if h.Score < floor || limit > 0 && len(out) == limit {
			break
		}
		out = append(out, h.Doc)
	}
	return out
}

// The relevance floors of [Index.Search], measured on the reference
// servers' catalogs (server-everything, server-filesystem and
// server-memory, alone and together: the root package's
// TestToolSearchRealCatalogs and TestToolSearchFloorReal) and on
// testserver's catalog of 1,000 tools (its 20 tasks).
const (
	// RelativeFloor: a hit scores at least this fraction of the best hit.
	// The tool a task wants scores at least 0.82 of the best when it is
	// not the best itself (the 20 tasks); the filler under a clear best
	// scores at most 0.44 of it ("add two numbers": get-sum 3.35, then
	// create_directory 1.48).
	RelativeFloor = 0.5
	// AbsoluteFloor: when the query holds a word that no tool holds (nor
	// the words it stands for), a hit scores at least this fraction of
	// [Index.RareScore]. The query may then ask for what no tool does, and
	// a hit that shares only words many tools hold is filler: "delete a
	// file" over server-everything and server-filesystem matches the 14
	// tools that say "file" at 0.21 of it, "send an email" a research tool
	// at 0.34, while the wanted tools score 0.46 of it or more. A query
	// whose only known words all the tools hold gets none ("show the
	// whole graph" over server-memory, whose 9 tools all say "graph"): the
	// model is told to search again with other words.
	AbsoluteFloor = 0.4
)

// A Hit is a document that matched a query, and its score.
type Hit struct {
	Doc   int     // the position in the documents of [New]
	Score float64 // BM25F, summed over the query's terms
}

// Rank returns every document that shares a word with query (or with the
// words it stands for), best first, with its score, whatever the floors.
func (ix *Index) Rank(query string) []Hit {
	hits, _ := ix.rank(query)
	return hits
}

// rank is [Index.Rank], and whether query holds a word that no document
// holds, nor the words it stands for.
func (ix *Index) rank(query string) (hits []Hit, unknown bool) {
	tokens := Tokens(query)
	scores := make([]float64, ix.n)
	for _, q := range Expand(tokens) {
		ps := ix.postings[q.Term]
		idf := ix.idf(len(ps))
		for _, p := range ps {
			scores[p.doc] += q.Weight * idf * p.wtf / (k1 + p.wtf)
		}
	}
	for i, s := range scores {
		if s > 0 {
			hits = append(hits, Hit{i, s})
		}
	}
	slices.SortStableFunc(hits, func(x, y Hit) int { return cmp.Compare(y.Score, x.Score) })
	for _, tok := range tokens {
		if len(ix.postings[tok]) == 0 && !slices.ContainsFunc(synonyms[tok], func(w string) bool { return len(ix.postings[w]) > 0 }) {
			unknown = true
		}
	}
	return hits, unknown
}

// idf is the inverse document frequency of a term that df documents hold.
func (ix *Index) idf(df int) float64 {
	return math.Log(1 + (float64(ix.n)-float64(df)+0.5)/(float64(df)+0.5))
}

// RareScore is the yardstick of [AbsoluteFloor]: the idf of a word that
// one document holds. What a query's word adds to the score of a document
// is its idf times less than 1, so a word that one document alone holds
// adds less than RareScore to it. It grows with the number of documents,
// as the scores do.
func (ix *Index) RareScore() float64 { return ix.idf(1) }

// A QueryTerm is a term of a query and its weight.
type QueryTerm struct {
	Term   string
	Weight float64
}

// synonymWeight is the weight of a word a query's word stands for: less
// than the word itself, enough to lift the tools of that verb among the
// tools of the same noun ("put an event in the calendar" finds the tool
// that creates events first among the calendar's ten event tools).
const synonymWeight = 0.8

// synonymsOf maps the words tools are named with to the words a task says
// them with: a user adds, puts or opens what a tool creates, and keeps
// files in folders that tools call directories. It holds the verbs of
// every catalog and a few nouns of files; other nouns are the domain's
// own.
var synonymsOf = map[string][]string{
	"create":    {"add", "new", "make", "put", "insert", "open", "register"},
	"delete":    {"remove", "erase", "drop", "destroy", "purge", "forget"},
	"update":    {"edit", "change", "modify", "move", "rename", "set"},
	"get":       {"show", "fetch", "read", "view", "retrieve", "display"},
	"list":      {"show", "enumerate"},
	"search":    {"find", "look", "lookup", "locate"},
	"directory": {"folder"},
	"image":     {"picture", "photo"},
}

// synonyms maps the stem of each word of synonymsOf to the stems of the
// words it stands for, in a fixed order.
var synonyms = func() map[string][]string {
	out := make(map[string][]string)
	for _, word := range slices.Sorted(maps.Keys(synonymsOf)) {
		for _, w := range synonymsOf[word] {
			out[stem(w)] = append(out[stem(w)], stem(word))
		}
	}
	return out
}()

// Expand returns the terms of a query made of tokens: each distinct token
// with weight 1, then the words they stand for (see synonymsOf) with a
// lower weight, unless the query says them itself.
func Expand(tokens []string) []QueryTerm {
	var out []QueryTerm
	index := make(map[string]int)
	add := func(term string, weight float64) {
		if i, ok := index[term]; ok {
			out[i].Weight = max(out[i].Weight, weight)
			return
		}
		index[term] = len(out)
		out = append(out, QueryTerm{term, weight})
	}
	for _, tok := range tokens {
		add(tok, 1)
	}
	for _, tok := range tokens {
		for _, verb := range synonyms[tok] {
			add(verb, synonymWeight)
		}
	}
	return out
}

// Tokens returns the index terms of text: its words, split, folded,
// without stop words, stemmed.
func Tokens(text string) []string {
	var out []string
	for _, w := range words(text) {
		w = strings.ToLower(w)
		if len(w) < 2 && !unicode.IsDigit(rune(w[0])) || stopWords[w] {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// words splits text into words: runs of letters or digits, cut where the
// case goes from lower to upper ("readFile"), before the last capital of a
// run followed by a lower-case letter ("HTTPServer": "HTTP", "Server"), and
// between letters and digits ("utf8": "utf", "8"). The words are slices of
// text.
func words(text string) []string {
	var out []string
	start := -1   // of the current word, or -1
	var prev rune // the rune before i, inside a word
	for i, r := range text {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if start >= 0 {
				out = append(out, text[start:i])
				start = -1
			}
			continue
		}
		if start >= 0 && boundary(prev, r, text[i+utf8.RuneLen(r):]) {
			out = append(out, text[start:i])
			start = -1
		}
		if start < 0 {
			start = i
		}
		prev = r
	}
	if start >= 0 {
		out = append(out, text[start:])
	}
	return out
}

// boundary reports whether a word starts at r, a letter or digit after
// prev, another, and before rest.
func boundary(prev, r rune, rest string) bool {
	switch {
	case unicode.IsDigit(prev) != unicode.IsDigit(r):
		return true
	case unicode.IsLower(prev) && unicode.IsUpper(r):
		return true
	case unicode.IsUpper(prev) && unicode.IsUpper(r):
		next, _ := utf8.DecodeRuneInString(rest)
		return unicode.IsLower(next)
	}
	return false
}

// stopWords are words that say nothing about which tool a task needs.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"for": true, "from": true, "how": true, "in": true, "into": true, "is": true, "it": true, "its": true,
	"me": true, "my": true, "of": true, "on": true, "or": true, "our": true, "please": true, "that": true,
	"the": true, "their": true, "them": true, "then": true, "they": true, "this": true, "to": true, "us": true, "we": true, "what": true,
	"when": true, "which": true, "with": true, "you": true, "your": true,
}

// stem strips the inflections of an English word, after steps 1a to 1c of
// Porter's algorithm, then a final "e" ("create", "created" and "creating"
// all give "creat"). The stems are keys, not words.
func stem(w string) string {
	if len(w) <= 3 || !isASCIILower(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "ies"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "eed"):
	case strings.HasSuffix(w, "ed") && hasVowel(w[:len(w)-2]):
		w = undouble(w[:len(w)-2])
	case strings.HasSuffix(w, "ing") && len(w) > 5 && hasVowel(w[:len(w)-3]):
		w = undouble(w[:len(w)-3])
	}
	if strings.HasSuffix(w, "y") && hasVowel(w[:len(w)-1]) {
		w = w[:len(w)-1] + "i"
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

// undouble drops the last letter of a stem ending in a double consonant
// other than l, s or z ("runn": "run"), as Porter's step 1b does.
func undouble(w string) string {
	n := len(w)
	if n >= 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// hasVowel reports whether w holds a vowel.
func hasVowel(w string) bool { return strings.ContainsAny(w, "aeiouy") }

// isASCIILower reports whether w is made of ASCII lower-case letters only:
// the stemmer knows English, nothing else.
func isASCIILower(w string) bool {
	for i := range len(w) {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}
