package deploy

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/commands.jsonl from the manifests and the workflow")

// commandsFile lists every simbench command line that deploy's manifests
// and the workflow run, as the pods and steps see them (the index or matrix
// value substituted), one JSON object a line: {"source": …, "args": […]}
// with args after the program's name. The simbench module's tests parse
// each with the command's own parser.
const commandsFile = "testdata/commands.jsonl"

// command is one line of commandsFile.
type command struct {
	Source string   `json:"source"`
	Args   []string `json:"args"`
}

// commands extracts the simbench command lines: each simbench container
// (an Indexed Job's once per index) of the manifests, and each command the
// workflow runs, as its steps write it.
func commands(t *testing.T, files map[string]string) []command {
	t.Helper()
	m, problems := parseManifests(files)
	wf, p := parseWorkflow(workflowFile, files[workflowFile])
	if problems = slices.Concat(problems, p); len(problems) > 0 {
		t.Fatal(strings.Join(problems, "\n"))
	}
	var out []command
	add := func(source string, spec []string, n int, ref string) {
		for i := range max(n, 1) {
			args := slices.Clone(spec)
			src := source
			if n > 0 {
				for k := range args {
					args[k] = expand(args[k], ref, i)
				}
				src = fmt.Sprintf("%s (%d of %d)", source, i, n)
			}
			out = append(out, command{src, args})
		}
	}
	keys := slices.SortedFunc(maps.Keys(m.file), func(a, b string) int {
		if c := strings.Compare(m.file[a], m.file[b]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, key := range keys {
		kind, name, _ := strings.Cut(key, "/")
		var cs []string
		n := 0
		switch kind {
		case "Job":
			j := m.jobs[name]
			if c := j.Spec.Template.Spec.Containers; len(c) == 1 && slices.Equal(c[0].Command, []string{"simbench"}) {
				cs = c[0].Args
				if j.Spec.Completions != nil && j.Spec.CompletionMode != nil {
					n = int(*j.Spec.Completions)
				}
			}
		case "Deployment":
			if c := m.deployments[name].Spec.Template.Spec.Containers; len(c) == 1 && slices.Equal(c[0].Command, []string{"simbench"}) {
				cs = c[0].Args
			}
		}
		if cs != nil {
			add(m.file[key]+" "+key, cs, n, indexRef)
		}
	}
	return append(out, workflowCommands(wf)...)
}

// testdata/commands.jsonl is what the manifests and the workflow run:
// go test -update rewrites it after a change to them.
func TestCommandsFile(t *testing.T) {
	var b strings.Builder
	for _, c := range commands(t, readFiles(t)) {
		line, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if *update {
		if err := os.WriteFile(commandsFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(commandsFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != b.String() {
		t.Errorf("%s is not what the manifests and the workflow run (go test -update rewrites it):\n got:\n%s\nwant:\n%s", commandsFile, got, b.String())
	}
}
