// Package mdcheck checks Markdown files as a reader on GitHub meets them:
// parsed as CommonMark by goldmark, a fenced code block must be closed
// (an unclosed one swallows the rest of the file), and every relative link
// must reach a file of the repository and, with a #fragment, a heading of
// it (GitHub's anchors).
package mdcheck

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// Problem is one thing wrong in a Markdown file, at a 1-based line.
type Problem struct {
	// File is the Markdown file's path, as given.
	File string
	// Line is the line at fault, from 1.
	Line int
	// What says what is wrong, in words.
	What string
}

// String is "FILE:LINE: WHAT".
func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.What) }

// markdown parses as GitHub does: CommonMark with its tables, strikethrough
// and autolinks.
var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// CheckFile reads and checks the Markdown file at path; relative links
// resolve against its directory.
func CheckFile(path string) ([]Problem, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Check(path, src), nil
}

// Check checks src, the Markdown file at path (links resolve against its
// directory; path need not exist for a document without relative links),
// and returns its problems in document order.
func Check(path string, src []byte) []Problem {
	doc := markdown.Parser().Parse(text.NewReader(src))
	var out []Problem
	add := func(offset int, format string, args ...any) {
		out = append(out, Problem{File: path, Line: 1 + bytes.Count(src[:offset], []byte("\n")), What: fmt.Sprintf(format, args...)})
	}
	anchors := Anchors(src)
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.FencedCodeBlock:
			if start, ok := unclosed(n, src); ok {
				add(start, "a ``` code block is never closed: everything after it renders as code")
			}
			if at, heading := swallowedHeading(n, src); heading != "" {
				add(at, "a code block holds %q, a heading: the fence before it is likely unclosed, so this block's opening fence closes it", heading)
			}
		case *ast.Link:
			if what := checkLink(path, string(n.Destination), anchors); what != "" {
				add(offsetOf(n, src), "link %s: %s", n.Destination, what)
			}
		case *ast.Image:
			if what := checkLink(path, string(n.Destination), anchors); what != "" {
				add(offsetOf(n, src), "image %s: %s", n.Destination, what)
			}
		}
		return ast.WalkContinue, nil
	})
	return out
}

// fenceLine matches a line that opens or closes a fence, after any
// container markers (block quotes, list indentation).
var fenceLine = regexp.MustCompile("^[ \t>]*(`{3,}|~{3,})")

// unclosed reports whether a fenced code block runs to the end of the
// document or of its container without a closing fence, and the offset of
// its opening fence. CommonMark closes such a block silently and goldmark's
// tree does not record it, so the line after the block's last one is read:
// it must be a fence of the opening's character, at least as long.
func unclosed(n *ast.FencedCodeBlock, src []byte) (start int, ok bool) {
	lines := n.Lines()
	switch {
	case n.Info != nil:
		start = lineStart(src, n.Info.Segment.Start)
	case lines.Len() > 0:
		start = lineStart(src, max(lines.At(0).Start-1, 0))
	default:
		return 0, false // ``` then ```: nothing to place, nothing swallowed
	}
	opening := fenceLine.FindSubmatch(src[start:])
	if opening == nil {
		return 0, false
	}
	next := nextLine(src, start) // the line after the opening fence
	if lines.Len() > 0 {
		next = nextLine(src, max(lines.At(lines.Len()-1).Stop-1, 0))
	}
	if next >= len(src) {
		return start, true
	}
	closing := fenceLine.FindSubmatch(src[next:])
	if closing == nil || closing[1][0] != opening[1][0] || len(closing[1]) < len(opening[1]) {
		return start, true
	}
	return 0, false
}

// swallowedHeading returns the first line of a code block (not one of
// Markdown) that reads as a section heading ("## Regression gate") and its
// offset: the mark of an earlier fence left open, which turns the text up
// to the next fence into code.
func swallowedHeading(n *ast.FencedCodeBlock, src []byte) (at int, heading string) {
	if lang := string(n.Language(src)); lang == "md" || lang == "markdown" {
		return 0, ""
	}
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		line := strings.TrimRight(string(seg.Value(src)), "\n")
		if sectionHeading.MatchString(line) {
			return seg.Start, line
		}
	}
	return 0, ""
}

// sectionHeading matches a level 2–6 ATX heading whose text starts with a
// capital, as this repository's section headings do (a "## comment" in a
// shell or PromQL block starts in lower case).
var sectionHeading = regexp.MustCompile(`^#{2,6} [A-Z]`)

// lineStart is the offset of the start of the line holding offset i.
func lineStart(src []byte, i int) int { return bytes.LastIndexByte(src[:i], '\n') + 1 }

// nextLine is the offset of the start of the line after the one holding
// offset i, len(src) when there is none.
func nextLine(src []byte, i int) int {
	if j := bytes.IndexByte(src[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(src)
}

// offsetOf is the offset of an inline node's first text, or of its
// block's first line.
func offsetOf(n ast.Node, src []byte) int {
	for c := n.FirstChild(); c != nil; c = c.FirstChild() {
		if t, ok := c.(*ast.Text); ok {
			return t.Segment.Start
		}
	}
	for p := n.Parent(); p != nil; p = p.Parent() {
		if p.Type() == ast.TypeBlock && p.Lines().Len() > 0 {
			return p.Lines().At(0).Start
		}
	}
	return 0
}

// checkLink says what is wrong with a link's destination, "" when nothing
// is: an absolute URL is not checked; a relative path must exist beside
// path; a fragment must name a heading of the file it points into (a
// Markdown file; other files' fragments are not checked).
func checkLink(path, dest string, anchors map[string]bool) string {
	u, err := url.Parse(dest)
	if err != nil {
		return "not a URL: " + err.Error()
	}
	if u.Scheme != "" || u.Host != "" || strings.HasPrefix(dest, "//") {
		return ""
	}
	target := path
	if u.Path != "" {
		target = filepath.Join(filepath.Dir(path), filepath.FromSlash(u.Path))
		if _, err := os.Stat(target); err != nil {
			return fmt.Sprintf("%s does not exist", target)
		}
	}
	if u.Fragment == "" || !strings.HasSuffix(strings.ToLower(target), ".md") {
		return ""
	}
	if u.Path != "" {
		src, err := os.ReadFile(target)
		if err != nil {
			return err.Error()
		}
		anchors = Anchors(src)
	}
	if !anchors[u.Fragment] {
		return fmt.Sprintf("no heading of %s has the anchor #%s", target, u.Fragment)
	}
	return ""
}

// Anchors returns the anchors GitHub gives a Markdown document's headings:
// the heading's text in lower case, every character but letters, digits,
// spaces, hyphens and underscores dropped, spaces made hyphens; a repeated
// anchor gets -1, -2, … (goldmark's own heading IDs follow other rules).
func Anchors(src []byte) map[string]bool {
	doc := markdown.Parser().Parse(text.NewReader(src))
	out := map[string]bool{}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		h, ok := n.(*ast.Heading)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		slug := slugOf(plainText(h, src))
		id := slug
		for i := 1; out[id]; i++ {
			id = fmt.Sprintf("%s-%d", slug, i)
		}
		out[id] = true
		return ast.WalkSkipChildren, nil
	})
	return out
}

// plainText is a node's text without its markup (code spans' text kept).
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
		case *ast.String:
			b.Write(c.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// slugOf is GitHub's anchor of a heading's text.
func slugOf(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
