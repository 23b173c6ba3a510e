package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// nodeInstall is how to install what the Node examples need.
const nodeInstall = "apt-get install nodejs npm, then npm ci --prefix examples/node"

// nodeExample returns the command that runs the Node example name with 4
// conversations. Without node or the packages the test skips, saying what
// to install (make test's deps target installs both where it can), except
// in CI (CI=true), where it fails.
func nodeExample(t *testing.T, name string) []string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node is not installed: %s", nodeInstall)
		}
		t.Skipf("node is not installed: %s", nodeInstall)
	}
	for _, pkg := range []string{"@openai/agents", "ai", "@ai-sdk/openai", "zod"} {
		if _, err := os.Stat(filepath.Join("examples", "node", "node_modules", pkg)); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("the Node examples' package %s is missing: %s", pkg, nodeInstall)
			}
			t.Skipf("the Node examples' package %s is missing: %s", pkg, nodeInstall)
		}
	}
	return []string{node, filepath.Join("examples", "node", name+".mjs"), "4"}
}

// TestCheckGradesNodeAgents runs the OpenAI Agents SDK and Vercel AI SDK
// examples under check: each of the 4 conversations calls the model, runs
// its 8 lookups at once, and calls the model again for the answer.
func TestCheckGradesNodeAgents(t *testing.T) {
	for _, name := range []string{"agents-sdk", "vercel-ai"} {
		t.Run(name, func(t *testing.T) {
			rep, err := runCheckArgv(t, "tier3", nodeExample(t, name))
			wantNoFault(t, rep, err)
			if rep.Requests != 40 {
				t.Errorf("%d requests graded, want 4 conversations of 10", rep.Requests)
			}
			clients := map[string]bool{}
			for _, l := range rep.Lines {
				clients[l.Client] = true
				t.Logf("%s %s %s %s", l.Client, l.Verdict, l.Check, l.Figure)
			}
			// The 4 conversations, and the key they share.
			if len(clients) != 5 || !clients["key:sk-simbench (all 4 clients)"] {
				t.Errorf("graded clients %v, want session-0 to session-3 and their key", clients)
			}
		})
	}
}
