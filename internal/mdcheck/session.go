package mdcheck

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// Elision stands, in a session's shown output, for what the run prints but
// the page leaves out or what varies from run to run: a line that is only
// Elision matches any number of lines (none included), and Elision inside
// a line matches any text within that line.
const Elision = "⋯"

// Block is a fenced code block of a Markdown file.
type Block struct {
	// Lang is the info string's first word (console, toml, sh…).
	Lang string
	// Attrs are the info string's other words of the form key=value
	// ("```toml file=bad.toml": file is bad.toml).
	Attrs map[string]string
	// Line is the 1-based line of the opening fence.
	Line int
	// Text is the block's content, every line ending in a newline.
	Text string
}

// FencedBlocks returns the fenced code blocks of src in document order.
func FencedBlocks(src []byte) []Block {
	doc := markdown.Parser().Parse(text.NewReader(src))
	var out []Block
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		fb, ok := n.(*ast.FencedCodeBlock)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		b := Block{Attrs: map[string]string{}}
		var at int
		if fb.Info != nil {
			at = fb.Info.Segment.Start
			words := strings.Fields(string(fb.Info.Segment.Value(src)))
			for i, w := range words {
				if k, v, ok := strings.Cut(w, "="); ok && i > 0 {
					b.Attrs[k] = v
				} else if i == 0 {
					b.Lang = w
				}
			}
		} else if fb.Lines().Len() > 0 {
			at = max(fb.Lines().At(0).Start-1, 0)
		}
		b.Line = 1 + bytes.Count(src[:at], []byte("\n"))
		var t strings.Builder
		for i := 0; i < fb.Lines().Len(); i++ {
			seg := fb.Lines().At(i)
			t.Write(seg.Value(src))
		}
		b.Text = t.String()
		out = append(out, b)
		return ast.WalkSkipChildren, nil
	})
	return out
}

// Command is one command of a session block: a line "$ ARGS" and the
// output shown under it, up to the next "$ " line or the block's end.
type Command struct {
	// Line is the 1-based line of the "$ " line in the Markdown file.
	Line int
	// Args are the command's words, quotes removed.
	Args []string
	// Exit is the exit code the command must end with: 0, or N when the
	// line ends in a comment "# exits N".
	Exit int
	// Want is the output shown, one string per line (see Elision).
	Want []string
}

// exits is the comment that gives a command's expected exit code.
var exits = regexp.MustCompile(`\s+#\s*exits\s+(\d+)\s*$`)

// Session reads a session block (```console): lines starting "$ " are
// commands, the lines after each its output. A session must start with a
// command.
func Session(b Block) ([]Command, error) {
	var out []Command
	lines := strings.Split(strings.TrimSuffix(b.Text, "\n"), "\n")
	for i, l := range lines {
		line := b.Line + 1 + i
		cmd, ok := strings.CutPrefix(l, "$ ")
		if !ok {
			if len(out) == 0 {
				return nil, fmt.Errorf("line %d: a session starts with a command, \"$ …\"", line)
			}
			out[len(out)-1].Want = append(out[len(out)-1].Want, l)
			continue
		}
		c := Command{Line: line}
		if m := exits.FindStringSubmatchIndex(cmd); m != nil {
			c.Exit, _ = strconv.Atoi(cmd[m[2]:m[3]])
			cmd = cmd[:m[0]]
		}
		args, err := Words(cmd)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		if len(args) == 0 {
			return nil, fmt.Errorf("line %d: an empty command", line)
		}
		c.Args = args
		out = append(out, c)
	}
	return out, nil
}

// Words splits a command line as a POSIX shell splits simple words:
// blanks separate them, and single or double quotes keep blanks inside
// one (no variables, escapes inside quotes, pipes or redirections: a
// character the splitter does not handle is an error).
func Words(line string) ([]string, error) {
	var out []string
	var w strings.Builder
	in := false // inside a word
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if in {
				out = append(out, w.String())
				w.Reset()
				in = false
			}
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("unclosed %c in %q", c, line)
			}
			w.WriteString(line[i+1 : i+1+end])
			i += end + 1
			in = true
		case strings.IndexByte("|&;<>()$`\\*?[]#~", c) >= 0:
			return nil, fmt.Errorf("%q: %q needs a shell; session commands are plain words and quotes", line, c)
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, w.String())
	}
	return out, nil
}

// Match compares output with the lines shown (want, see Elision), each
// line's trailing blanks and the output's trailing blank lines ignored. It
// returns "" when they match, else what differs: the first shown line that
// the output does not have where the page shows it.
func Match(want []string, output string) string {
	got := strings.Split(strings.TrimRight(output, "\n \t"), "\n")
	for len(want) > 0 && strings.TrimSpace(want[len(want)-1]) == "" {
		want = want[:len(want)-1]
	}
	pats := make([]*regexp.Regexp, len(want))
	for i, w := range want {
		w = strings.TrimRight(w, " \t")
		if w == Elision {
			continue
		}
		parts := strings.Split(w, Elision)
		for j, p := range parts {
			parts[j] = regexp.QuoteMeta(p)
		}
		pats[i] = regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
	}
	// furthest is the shown line the longest partial match reached, for
	// the message.
	furthest, gotAt := 0, 0
	var match func(i, j int) bool
	match = func(i, j int) bool {
		if i > furthest {
			furthest, gotAt = i, j
		}
		if i == len(want) {
			return j == len(got)
		}
		if pats[i] == nil { // an elided run of lines
			for k := j; k <= len(got); k++ {
				if match(i+1, k) {
					return true
				}
			}
			return false
		}
		return j < len(got) && pats[i].MatchString(strings.TrimRight(got[j], " \t")) && match(i+1, j+1)
	}
	if match(0, 0) {
		return ""
	}
	if furthest == len(want) {
		return fmt.Sprintf("the output goes on after the last line shown: %q", got[gotAt])
	}
	if gotAt < len(got) {
		return fmt.Sprintf("shown line %d, %q, is not in the output where shown (the output has %q there)", furthest+1, want[furthest], got[gotAt])
	}
	return fmt.Sprintf("shown line %d, %q, is past the output's end", furthest+1, want[furthest])
}

// Paragraph is the prose of one paragraph, list item, table cell row or
// heading, inline code left out.
type Paragraph struct {
	// Line is the 1-based line the paragraph starts on.
	Line int
	// Text is its text, inline code spans removed.
	Text string
}

// Paragraphs returns the prose of src in document order: every text block
// outside code blocks, with inline code spans left out.
func Paragraphs(src []byte) []Paragraph {
	doc := markdown.Parser().Parse(text.NewReader(src))
	var out []Paragraph
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.Kind() {
		case ast.KindFencedCodeBlock, ast.KindCodeBlock, ast.KindHTMLBlock:
			return ast.WalkSkipChildren, nil
		case ast.KindParagraph, ast.KindTextBlock, ast.KindHeading, east.KindTableCell:
			var t strings.Builder
			proseOf(n, src, &t)
			line := 1
			if at := firstText(n); at >= 0 {
				line += bytes.Count(src[:at], []byte("\n"))
			}
			out = append(out, Paragraph{Line: line, Text: t.String()})
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return out
}

// proseOf writes the text under n, inline code spans left out.
func proseOf(n ast.Node, src []byte, w *strings.Builder) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.CodeSpan:
			w.WriteString(" ")
		case *ast.Text:
			w.Write(c.Segment.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				w.WriteString(" ")
			}
		default:
			proseOf(c, src, w)
		}
	}
}

// firstText returns the offset of the first text under n, or -1.
func firstText(n ast.Node) int {
	if t, ok := n.(*ast.Text); ok {
		return t.Segment.Start
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if at := firstText(c); at >= 0 {
			return at
		}
	}
	return -1
}
