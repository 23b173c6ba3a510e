package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// Every simbench command line that deploy/'s Kubernetes manifests and the
// sweep-work workflow run parses with simbench's own parser, so a flag
// renamed or removed here fails this test rather than a Job in a cluster.
// deploy/testdata/commands.jsonl lists them, each as its pod or step runs
// it; the deploy module's tests extract it from the manifests and the
// workflow and fail when it is out of date.
func TestDeployCommandsParse(t *testing.T) {
	f, err := os.Open("deploy/testdata/commands.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c struct {
			Source string   `json:"source"`
			Args   []string `json:"args"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("deploy/testdata/commands.jsonl line %d: %v", n+1, err)
		}
		n++
		var cli CLI
		parser, err := kong.New(&cli, kong.Vars{"version": "test"}, decisionVars, kong.Exit(func(int) { t.Errorf("%s: simbench %s asks to exit", c.Source, strings.Join(c.Args, " ")) }))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parser.Parse(c.Args); err != nil {
			t.Errorf("%s: simbench %s: %v", c.Source, strings.Join(c.Args, " "), err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("deploy/testdata/commands.jsonl lists no command")
	}
}
