package deploy

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// workflowFile is the shipped GitHub Actions workflow, from the root.
const workflowFile = ".github/workflows/sweep-shards.yml"

// matrixRef is how a shard job's steps name its matrix value.
const matrixRef = "${{ matrix.shard }}"

// workflow is the part of GitHub Actions' workflow syntax the shipped
// workflow uses; a key outside it is an error, so a misspelt key fails
// instead of being ignored.
type workflow struct {
	Name        string                  `yaml:"name"`
	On          yaml.Node               `yaml:"on"`
	Permissions map[string]string       `yaml:"permissions"`
	Jobs        map[string]*workflowJob `yaml:"jobs"`
}

// workflowJob is one job of a workflow.
type workflowJob struct {
	Needs          string `yaml:"needs"`
	If             string `yaml:"if"`
	RunsOn         string `yaml:"runs-on"`
	TimeoutMinutes int    `yaml:"timeout-minutes"`
	Strategy       *struct {
		FailFast *bool `yaml:"fail-fast"`
		Matrix   struct {
			Shard []int `yaml:"shard"`
		} `yaml:"matrix"`
	} `yaml:"strategy"`
	Steps []workflowStep `yaml:"steps"`
}

// workflowStep is one step of a job.
type workflowStep struct {
	Name string            `yaml:"name"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	With map[string]string `yaml:"with"`
	Run  string            `yaml:"run"`
}

// parseWorkflow decodes the workflow strictly.
func parseWorkflow(text string) (*workflow, []string) {
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	var wf workflow
	if err := dec.Decode(&wf); err != nil {
		return nil, []string{fmt.Sprintf("%s: %v", workflowFile, err)}
	}
	return &wf, nil
}

// simbenchRun returns the words of the job's one step that runs
// ./simbench with first (sweep, plus flag when given), or nil.
func (j *workflowJob) simbenchRun(flag string) []string {
	for _, s := range j.Steps {
		words := runWords(s.Run)
		if len(words) > 1 && words[0] == "./simbench" && words[1] == "sweep" && slices.Contains(words, flag) {
			return words[1:]
		}
	}
	return nil
}

// runWords splits a run step into words at white space, keeping
// ${{ matrix.shard }} one word. (The workflow's simbench steps quote
// nothing, so that this reads them as the shell does.)
func runWords(run string) []string {
	words := strings.Fields(strings.ReplaceAll(run, matrixRef, "\x00"))
	for i, w := range words {
		words[i] = strings.ReplaceAll(w, "\x00", matrixRef)
	}
	return words
}

// step returns the job's first step that uses the action (name@version).
func (j *workflowJob) step(action string) *workflowStep {
	for i, s := range j.Steps {
		if name, _, _ := strings.Cut(s.Uses, "@"); name == action {
			return &j.Steps[i]
		}
	}
	return nil
}

// check checks what the README and the workflow's comments say: a plan
// job, a shard job over a matrix of 0 to N-1 for the N of --shard
// ${{ matrix.shard }}/N, each uploading its own folder as an artifact of
// its own, not cancelled when another fails, and a merge job after them
// that downloads the artifacts and merges exactly the N folders they land
// in; the three on one scenario.
func (wf *workflow) check() []string {
	where := workflowFile + ": "
	plan, shard, merge := wf.Jobs["plan"], wf.Jobs["shard"], wf.Jobs["merge"]
	if plan == nil || shard == nil || merge == nil {
		return []string{where + "want jobs plan, shard and merge"}
	}
	var problems []string
	for name, j := range map[string]*workflowJob{"shard": shard, "merge": merge} {
		want := map[string]string{"shard": "plan", "merge": "shard"}[name]
		if j.Needs != want {
			problems = append(problems, fmt.Sprintf("%sjob %s needs %q, want %q", where, name, j.Needs, want))
		}
	}
	planRun, shardRun, mergeRun := plan.simbenchRun("--plan"), shard.simbenchRun("--shard"), merge.simbenchRun("--merge")
	if planRun == nil || shardRun == nil || mergeRun == nil {
		return append(problems, where+"want a ./simbench sweep step with --plan in job plan, --shard in shard, --merge in merge")
	}
	if a, b, c := arg(planRun, 1), arg(shardRun, 1), arg(mergeRun, 1); a != b || b != c {
		problems = append(problems, fmt.Sprintf("%sjobs plan, shard and merge sweep %q, %q and %q: want one scenario", where, a, b, c))
	}
	if shard.Strategy == nil || shard.Strategy.FailFast == nil || *shard.Strategy.FailFast {
		problems = append(problems, where+"job shard: want fail-fast: false, so that one shard failing leaves the others running")
	}
	v, _ := flagValue(shardRun, "--shard")
	i, ns, _ := strings.Cut(v, "/")
	n, err := strconv.Atoi(ns)
	if err != nil || n < 1 || i != matrixRef {
		return append(problems, fmt.Sprintf("%sjob shard: --shard %q, want %s/N", where, v, matrixRef))
	}
	var want []int
	for k := range n {
		want = append(want, k)
	}
	if shard.Strategy != nil && !slices.Equal(shard.Strategy.Matrix.Shard, want) {
		problems = append(problems, fmt.Sprintf("%sjob shard: matrix shard %v, want %v for --shard %s", where, shard.Strategy.Matrix.Shard, want, v))
	}
	out, _ := flagValue(shardRun, "--out")
	up := shard.step("actions/upload-artifact")
	if up == nil || up.With["path"] != out {
		return append(problems, fmt.Sprintf("%sjob shard: uploads %q, want --out %q", where, pathOf(up), out))
	}
	name := up.With["name"]
	if !strings.Contains(name, matrixRef) || !strings.Contains(out, matrixRef) {
		return append(problems, fmt.Sprintf("%sjob shard: artifact %q or --out %q does not hold %s: the shards would overwrite each other", where, name, out, matrixRef))
	}
	down := merge.step("actions/download-artifact")
	if down == nil {
		return append(problems, where+"job merge: no actions/download-artifact step")
	}
	var dirs []string
	for k := range n {
		artifact := expand(name, matrixRef, k)
		if ok, _ := path.Match(down.With["pattern"], artifact); !ok {
			problems = append(problems, fmt.Sprintf("%sjob merge: download pattern %q matches none of artifact %q", where, down.With["pattern"], artifact))
		}
		// Several artifacts download each into PATH/NAME.
		dirs = append(dirs, path.Join(down.With["path"], artifact))
	}
	if got := flagValues(mergeRun, "--merge"); !slices.Equal(got, dirs) {
		problems = append(problems, fmt.Sprintf("%sjob merge: merges %q, want the %d folders the artifacts download to, %q", where, got, n, dirs))
	}
	return problems
}

// pathOf returns an upload step's path ("" for none).
func pathOf(s *workflowStep) string {
	if s == nil {
		return ""
	}
	return s.With["path"]
}
