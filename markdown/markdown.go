// Package markdown turns a page's rendered DOM (HTML from the extension)
// into Markdown for the model: the whole page ("full"), or its main article
// ("readable", extracted with go-readability, Mozilla Readability's
// algorithm). Links and images are made absolute against the page URL.
package markdown

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	readability "codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
)

// Mode selects what Convert keeps.
type Mode string

// Modes.
const (
	// Readable keeps the main article only, falling back to Full when no
	// article is found.
	Readable Mode = "readable"
	// Full keeps the whole page.
	Full Mode = "full"
)

// Result is a converted page.
type Result struct {
	// Markdown is the converted text.
	Markdown string
	// Mode is the mode actually used: Full when Readable fell back.
	Mode Mode
	// Title is the article's title in readable mode, else "".
	Title string
	// Byline is the article's author line in readable mode, if any.
	Byline string
}

// Convert turns the HTML of a page at pageURL into Markdown. An empty or
// unparsable pageURL leaves links as they are.
func Convert(rawHTML, pageURL string, mode Mode) (Result, error) {
	base, _ := url.Parse(pageURL)
	if mode == Readable {
		doc, err := html.Parse(strings.NewReader(rawHTML))
		if err != nil {
			return Result{}, fmt.Errorf("parse page: %w", err)
		}
		art, err := readability.FromDocument(doc, base)
		if err == nil && art.Node != nil {
			absolutize(art.Node, base)
			md, err := toMarkdown(art.Node)
			if err != nil {
				return Result{}, err
			}
			if strings.TrimSpace(md) != "" {
				return Result{Markdown: md, Mode: Readable, Title: art.Title(), Byline: art.Byline()}, nil
			}
		}
	}
	doc, err := html.Parse(strings.NewReader(rawHTML))
	if err != nil {
		return Result{}, fmt.Errorf("parse page: %w", err)
	}
	if b := baseHref(doc); b != "" && base != nil {
		if u, err := base.Parse(b); err == nil {
			base = u
		}
	}
	absolutize(doc, base)
	md, err := toMarkdown(doc)
	if err != nil {
		return Result{}, err
	}
	return Result{Markdown: md, Mode: Full}, nil
}

func toMarkdown(n *html.Node) (string, error) {
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
		strikethrough.NewStrikethroughPlugin(),
	))
	out, err := conv.ConvertNode(n)
	if err != nil {
		return "", fmt.Errorf("convert to Markdown: %w", err)
	}
	return string(bytes.TrimSpace(out)), nil
}

// baseHref returns the document's <base href>, if any.
func baseHref(n *html.Node) string {
	if n.Type == html.ElementNode && n.Data == "base" {
		for _, a := range n.Attr {
			if a.Key == "href" {
				return a.Val
			}
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if h := baseHref(c); h != "" {
			return h
		}
	}
	return ""
}

// absolutize resolves href and src attributes against base (HTML's URL
// parsing rules via net/url; javascript: links are dropped).
func absolutize(n *html.Node, base *url.URL) {
	if base == nil {
		return
	}
	if n.Type == html.ElementNode {
		for i, a := range n.Attr {
			if a.Key != "href" && a.Key != "src" {
				continue
			}
			v := strings.TrimSpace(a.Val)
			if strings.HasPrefix(strings.ToLower(v), "javascript:") {
				n.Attr[i].Val = ""
				continue
			}
			if u, err := base.Parse(v); err == nil {
				n.Attr[i].Val = u.String()
			}
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		absolutize(c, base)
	}
}
