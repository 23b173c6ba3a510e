package reports

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/simbench/simbench/results"
)

// keyHeaders are the columns of the per-key table of a service with nested
// limits (organisation ⊃ project ⊃ key).
var keyHeaders = []string{"strategy", "service", "project", "key", "admitted", "429s", "429 share", "by key", "by project", "by organization"}

// keyKey explains the per-key table in one sentence.
const keyKey = "each API key's requests on a service with nested limits: admitted, answered 429, and the 429s split by the level whose limit refused them (the key's own, its project's, the organisation's); a key with no project is under the organisation, shown –"

// keyRows returns the per-key table's rows, a row per strategy, service
// and key in the order results list them (nil when no strategy has keys).
func keyRows(r *results.Results) [][]string {
	var rows [][]string
	for i := range r.Strategies {
		s := &r.Strategies[i]
		for _, svc := range slices.Sorted(maps.Keys(s.Keys)) {
			for _, k := range s.Keys[svc] {
				project := k.Project
				if project == "" {
					project = "–"
				}
				rows = append(rows, []string{s.Name, svc, project, k.Key, num(float64(k.Admitted)), num(float64(k.RateLimited)),
					fixed(100*k.RateLimitedShare, 1, false) + "%", num(float64(k.RateLimitedBy["key"])),
					num(float64(k.RateLimitedBy["project"])), num(float64(k.RateLimitedBy["organization"]))})
			}
		}
	}
	return rows
}

// keySpare are the per-key columns a narrow terminal leaves out, the least
// essential first: the split by level is the detail, the 429 share the
// verdict.
var keySpare = []string{"by organization", "by project", "by key", "service", "admitted"}

// keyTextTable is the per-key table in columns: strategy, service, project
// and key are text, aligned left, the others numbers.
func keyTextTable(rows [][]string) columnTable {
	return columnTable{headers: keyHeaders, rows: rows, left: 4, spare: keySpare}
}

// keyTableMarkdown writes the per-key table as a Markdown section.
func keyTableMarkdown(b *strings.Builder, rows [][]string) {
	b.WriteString("## Per key\n\n")
	ct := keyTextTable(rows)
	mdTable(b, ct.headers, ct.left, ct.rows)
	fmt.Fprintf(b, "\n%s\n\n", mdEscape(sentence(keyKey)))
}
