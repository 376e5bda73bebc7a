// Package textmetrics scores extracted text against a reference, for the
// reading-quality tests: word-bag F1 over lowercase letter/digit words.
package textmetrics

import (
	"regexp"
	"strings"

	"golang.org/x/net/html"
)

var word = regexp.MustCompile(`[\pL\pN]+`)

// WordBag counts the lowercase words of text.
func WordBag(text string) map[string]int {
	bag := map[string]int{}
	for _, w := range word.FindAllString(strings.ToLower(text), -1) {
		bag[w]++
	}
	return bag
}

// F1 is the word-bag F1 score of got against want: the harmonic mean of
// precision (shared words / got's words) and recall (shared / want's).
func F1(got, want string) float64 {
	g, w := WordBag(got), WordBag(want)
	common, ng, nw := 0, 0, 0
	for k, n := range g {
		ng += n
		common += min(n, w[k])
	}
	for _, n := range w {
		nw += n
	}
	if ng == 0 || nw == 0 || common == 0 {
		return 0
	}
	p, r := float64(common)/float64(ng), float64(common)/float64(nw)
	return 2 * p * r / (p + r)
}

// HTMLText returns the text nodes of an HTML document, space separated.
func HTMLText(rawHTML string) string {
	doc, err := html.Parse(strings.NewReader(rawHTML))
	if err != nil {
		return ""
	}
	var sb strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			sb.WriteString(n.Data)
			sb.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return sb.String()
}
