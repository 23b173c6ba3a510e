package deploy

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// The shipped GitHub Actions workflows, from the root: the one a person
// runs, and the round it calls once per round.
const (
	workflowFile = ".github/workflows/sweep-shards.yml"
	roundFile    = ".github/workflows/sweep-round.yml"
)

// roundUses is how the workflow calls the round.
const roundUses = "./" + roundFile

// matrixRef is how a shard job's steps name its matrix value.
const matrixRef = "${{ matrix.shard }}"

// workflow is the part of GitHub Actions' workflow syntax the shipped
// workflows use; a key outside it is an error, so a misspelt key fails
// instead of being ignored.
type workflow struct {
	Name string `yaml:"name"`
	On   struct {
		WorkflowDispatch *yaml.Node `yaml:"workflow_dispatch"`
		WorkflowCall     *struct {
			Inputs map[string]struct {
				Description string `yaml:"description"`
				Type        string `yaml:"type"`
				Required    bool   `yaml:"required"`
			} `yaml:"inputs"`
			Outputs map[string]struct {
				Description string `yaml:"description"`
				Value       string `yaml:"value"`
			} `yaml:"outputs"`
		} `yaml:"workflow_call"`
	} `yaml:"on"`
	Permissions map[string]string       `yaml:"permissions"`
	Defaults    *workflowDefaults       `yaml:"defaults"`
	Jobs        map[string]*workflowJob `yaml:"jobs"`
}

// workflowDefaults is a workflow's or job's defaults.
type workflowDefaults struct {
	Run struct {
		Shell string `yaml:"shell"`
	} `yaml:"run"`
}

// workflowJob is one job of a workflow: steps on a runner, or a call of a
// reusable workflow (uses, with).
type workflowJob struct {
	Needs          needsList         `yaml:"needs"`
	If             string            `yaml:"if"`
	RunsOn         string            `yaml:"runs-on"`
	TimeoutMinutes int               `yaml:"timeout-minutes"`
	Uses           string            `yaml:"uses"`
	With           map[string]string `yaml:"with"`
	Outputs        map[string]string `yaml:"outputs"`
	Defaults       *workflowDefaults `yaml:"defaults"`
	Strategy       *struct {
		FailFast *bool `yaml:"fail-fast"`
		Matrix   struct {
			Shard []int `yaml:"shard"`
		} `yaml:"matrix"`
	} `yaml:"strategy"`
	Steps []workflowStep `yaml:"steps"`
}

// needsList is a job's needs: one job's name or a list of them.
type needsList []string

// UnmarshalYAML reads a name or a list.
func (n *needsList) UnmarshalYAML(v *yaml.Node) error {
	if v.Kind == yaml.ScalarNode {
		*n = needsList{v.Value}
		return nil
	}
	var list []string
	if err := v.Decode(&list); err != nil {
		return err
	}
	*n = list
	return nil
}

// workflowStep is one step of a job.
type workflowStep struct {
	Name string            `yaml:"name"`
	ID   string            `yaml:"id"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	With map[string]string `yaml:"with"`
	Run  string            `yaml:"run"`
}

// parseWorkflow decodes the workflow in file strictly.
func parseWorkflow(file, text string) (*workflow, []string) {
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	var wf workflow
	if err := dec.Decode(&wf); err != nil {
		return nil, []string{fmt.Sprintf("%s: %v", file, err)}
	}
	return &wf, nil
}

// ghRun is one simbench command a workflow step ran in the simulation.
type ghRun struct {
	job   string   // "round-3 shard (1 of 4)"
	round int      // 0: the merge job
	args  []string // after ./simbench, globs expanded
	seen  int      // the rounds whose folders the command was given, all of them; -1: some other set
}

// ghSim runs the two workflows as GitHub Actions would, far enough to
// check their wiring: jobs in the order of needs, job and step conditions
// of the forms they use, artifacts uploaded and downloaded (a pattern
// downloads each artifact to PATH/NAME; artifacts keep no file modes),
// and the few shell lines their run steps hold. ./simbench is not run:
// a command's result comes from the plan counts, the runs the sweep needs
// after rounds 1, 2, … (counts[k] after k rounds), and a shard writes
// files only when its slice of them is not empty. The matrix of a round's
// shards runs one after the other, each uploading before the next
// downloads, which is the worst order a runner may pick.
type ghSim struct {
	counts    []int
	artifacts map[string]*ghArtifact
	uploaded  []string // artifact names in order
	runs      []ghRun
	problems  []string
	built     int // go build steps run
}

// ghArtifact is an uploaded artifact: the folders and files it holds
// (relative to its path), and for a shard's folder the round it is of.
type ghArtifact struct {
	files []string
	round int // the round whose shard wrote it; 0: none
}

// ghJobState is what a job left: result (success, failure, skipped) and
// outputs.
type ghJobState struct {
	result  string
	outputs map[string]string
}

// simulate runs the workflow wf that calls round, and returns what ran.
func simulate(wf, round *workflow, counts []int) *ghSim {
	s := &ghSim{counts: counts, artifacts: map[string]*ghArtifact{}}
	done := map[string]*ghJobState{}
	order, err := jobOrder(wf.Jobs)
	if err != nil {
		s.problems = append(s.problems, workflowFile+": "+err.Error())
		return s
	}
	for _, name := range order {
		j := wf.Jobs[name]
		run, err := s.cond(j, done)
		if err != nil {
			s.problems = append(s.problems, fmt.Sprintf("%s: job %s: %v", workflowFile, name, err))
			run = false
		}
		if !run {
			done[name] = &ghJobState{result: "skipped"}
			continue
		}
		if j.Uses != "" {
			done[name] = s.call(name, j, round)
			continue
		}
		done[name] = s.job(workflowFile, name, j, wf.Defaults, map[string]string{}, 0)
	}
	return s
}

// jobOrder sorts jobs so that each comes after those it needs (by name
// among the ready ones), refusing an unknown need or a cycle.
func jobOrder(jobs map[string]*workflowJob) ([]string, error) {
	var order []string
	placed := map[string]bool{}
	for len(order) < len(jobs) {
		var ready []string
		for name, j := range jobs {
			if placed[name] {
				continue
			}
			ok := true
			for _, n := range j.Needs {
				if jobs[n] == nil {
					return nil, fmt.Errorf("job %s needs %q, which is no job", name, n)
				}
				ok = ok && placed[n]
			}
			if ok {
				ready = append(ready, name)
			}
		}
		if len(ready) == 0 {
			return nil, fmt.Errorf("the needs of jobs form a cycle")
		}
		slices.Sort(ready)
		for _, r := range ready {
			placed[r] = true
		}
		order = append(order, ready...)
	}
	return order, nil
}

// statusFuncs are the functions that stop a job's if from meaning
// success() && (…).
var statusFuncs = regexp.MustCompile(`\b(success|failure|always|cancelled)\(\)`)

// cond evaluates a job's if: no if, or one without a status function,
// first needs every needed job to have succeeded.
func (s *ghSim) cond(j *workflowJob, done map[string]*ghJobState) (bool, error) {
	expr := strings.TrimSpace(j.If)
	expr = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(expr, "${{"), "}}"))
	if !statusFuncs.MatchString(expr) {
		for _, n := range j.Needs {
			if done[n].result != "success" {
				return false, nil
			}
		}
	}
	if expr == "" {
		return true, nil
	}
	for term := range strings.SplitSeq(expr, "&&") {
		ok, err := evalTerm(strings.TrimSpace(term), j.Needs, done)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// evalTerm evaluates one term of the forms the workflows use.
var (
	resultTerm = regexp.MustCompile(`^needs\.([\w-]+)\.result == '(\w+)'$`)
	outputTerm = regexp.MustCompile(`^needs\.([\w-]+)\.outputs\.([\w-]+) (==|!=) '([^']*)'$`)
)

func evalTerm(term string, needs needsList, done map[string]*ghJobState) (bool, error) {
	known := func(n string) error {
		if !slices.Contains(needs, n) {
			return fmt.Errorf("if %q reads job %s, which the job does not need", term, n)
		}
		return nil
	}
	if term == "!cancelled()" {
		return true, nil
	}
	if m := resultTerm.FindStringSubmatch(term); m != nil {
		return done[m[1]] != nil && done[m[1]].result == m[2], known(m[1])
	}
	if m := outputTerm.FindStringSubmatch(term); m != nil {
		if err := known(m[1]); err != nil {
			return false, err
		}
		got := done[m[1]].outputs[m[2]]
		return (got == m[4]) == (m[3] == "=="), nil
	}
	return false, fmt.Errorf("if: the test does not know what %q means", term)
}

// call runs the round workflow for a job of the caller.
func (s *ghSim) call(name string, j *workflowJob, round *workflow) *ghJobState {
	fail := func(msg string, a ...any) *ghJobState {
		s.problems = append(s.problems, fmt.Sprintf("%s: job %s: ", workflowFile, name)+fmt.Sprintf(msg, a...))
		return &ghJobState{result: "failure"}
	}
	if j.Uses != roundUses {
		return fail("uses %q, want %q", j.Uses, roundUses)
	}
	if round.On.WorkflowCall == nil {
		return fail("%s has no on: workflow_call", roundFile)
	}
	inputs := map[string]string{}
	for k, in := range round.On.WorkflowCall.Inputs {
		v, ok := j.With[k]
		if !ok && in.Required {
			return fail("with: no %s, which %s requires", k, roundFile)
		}
		inputs[k] = v
	}
	for k := range j.With {
		if _, ok := round.On.WorkflowCall.Inputs[k]; !ok {
			return fail("with: %s is no input of %s", k, roundFile)
		}
	}
	k, err := strconv.Atoi(inputs["round"])
	if err != nil || k < 1 {
		return fail("with: round %q, want a number from 1", inputs["round"])
	}
	done := map[string]*ghJobState{}
	order, err := jobOrder(round.Jobs)
	if err != nil {
		return fail("%s: %v", roundFile, err)
	}
	state := &ghJobState{result: "success", outputs: map[string]string{}}
	for _, jn := range order {
		rj := round.Jobs[jn]
		run, err := s.cond(rj, done)
		if err != nil {
			return fail("%s job %s: %v", roundFile, jn, err)
		}
		if !run {
			done[jn] = &ghJobState{result: "skipped"}
			continue
		}
		done[jn] = s.job(roundFile, name+" "+jn, rj, round.Defaults, inputs, k)
		if done[jn].result == "failure" {
			state.result = "failure"
		}
	}
	for out, o := range round.On.WorkflowCall.Outputs {
		m := regexp.MustCompile(`^\$\{\{ jobs\.([\w-]+)\.outputs\.([\w-]+) \}\}$`).FindStringSubmatch(o.Value)
		if m == nil || done[m[1]] == nil {
			return fail("%s: output %s is %q, want ${{ jobs.JOB.outputs.NAME }}", roundFile, out, o.Value)
		}
		state.outputs[out] = done[m[1]].outputs[m[2]]
	}
	return state
}

// job runs a job of steps, once per matrix value if it has a matrix.
func (s *ghSim) job(file, label string, j *workflowJob, defaults *workflowDefaults, inputs map[string]string, round int) *ghJobState {
	if j.Strategy == nil || len(j.Strategy.Matrix.Shard) == 0 {
		return s.steps(file, label, j, defaults, inputs, round, -1, 0)
	}
	state := &ghJobState{result: "success"}
	for _, v := range j.Strategy.Matrix.Shard {
		st := s.steps(file, fmt.Sprintf("%s (%d of %d)", label, v, len(j.Strategy.Matrix.Shard)), j, defaults, inputs, round, v, len(j.Strategy.Matrix.Shard))
		if st.result == "failure" {
			state.result = "failure"
		}
	}
	return state
}

// steps runs a job's steps on a fresh runner.
func (s *ghSim) steps(file, label string, j *workflowJob, defaults *workflowDefaults, inputs map[string]string, round, shard, shards int) *ghJobState {
	where := fmt.Sprintf("%s: job %s: ", file, label)
	fs := map[string]string{} // path → "dir", "file" or "exec"
	vars := map[string]string{}
	steps := map[string]map[string]string{}
	fail := func(msg string, a ...any) *ghJobState {
		s.problems = append(s.problems, where+fmt.Sprintf(msg, a...))
		return &ghJobState{result: "failure"}
	}
	shell := ""
	for _, d := range []*workflowDefaults{defaults, j.Defaults} {
		if d != nil {
			shell = d.Run.Shell
		}
	}
	expandExpr := func(text string) (string, error) {
		text = strings.ReplaceAll(text, "${{ inputs.round }}", inputs["round"])
		if shard >= 0 {
			text = strings.ReplaceAll(text, matrixRef, strconv.Itoa(shard))
		}
		for _, m := range regexp.MustCompile(`\$\{\{ steps\.([\w-]+)\.outputs\.([\w-]+) \}\}`).FindAllStringSubmatch(text, -1) {
			text = strings.ReplaceAll(text, m[0], steps[m[1]][m[2]])
		}
		if strings.Contains(text, "${{") {
			return "", fmt.Errorf("%q: the test does not know this expression", text)
		}
		return text, nil
	}
	for _, st := range j.Steps {
		if st.If != "" && st.If != "${{ !cancelled() }}" {
			return fail("step if %q: the test does not know it", st.If)
		}
		with := map[string]string{}
		for k, v := range st.With {
			e, err := expandExpr(v)
			if err != nil {
				return fail("%v", err)
			}
			with[k] = e
		}
		action, _, _ := strings.Cut(st.Uses, "@")
		switch action {
		case "":
		case "actions/checkout":
			fs["go.mod"] = "file"
			continue
		case "actions/setup-go":
			fs["go"] = "exec"
			continue
		case "actions/download-artifact":
			dest := with["path"]
			if dest == "" {
				dest = "."
			}
			if n := with["name"]; n != "" {
				a := s.artifacts[n]
				if a == nil {
					return fail("downloads artifact %q, which no job before it uploads", n)
				}
				for _, f := range a.files {
					fs[path.Join(dest, f)] = "file"
				}
				continue
			}
			for _, n := range s.uploaded {
				if ok, _ := path.Match(with["pattern"], n); ok {
					fs[path.Join(dest, n)] = "dir"
				}
			}
			continue
		case "actions/upload-artifact":
			n, p := with["name"], with["path"]
			if s.artifacts[n] != nil {
				return fail("uploads artifact %q a second time, which upload-artifact@v4 refuses", n)
			}
			kind, ok := fs[p]
			if !ok || kind == "emptydir" {
				if with["if-no-files-found"] == "error" {
					return fail("uploads %q, which holds no file", p)
				}
				continue
			}
			a := &ghArtifact{files: []string{path.Base(p)}}
			if kind == "dir" {
				a.files = []string{"."}
			}
			if kind == "shard" {
				a.round, a.files = round, []string{"."}
			}
			s.artifacts[n] = a
			s.uploaded = append(s.uploaded, n)
			continue
		default:
			return fail("uses %s, which the test does not know", st.Uses)
		}
		run, err := expandExpr(st.Run)
		if err != nil {
			return fail("%v", err)
		}
		nullglob := false
		for line := range strings.Lines(run) {
			line = strings.TrimSpace(line)
			words := strings.Fields(line)
			switch {
			case line == "":
			case line == "shopt -s nullglob":
				if shell != "bash" {
					return fail("shopt in a step whose shell is %q, not bash", shell)
				}
				nullglob = true
			case line == "go build -o simbench .":
				if fs["go"] != "exec" || fs["go.mod"] == "" {
					return fail("go build without actions/checkout and actions/setup-go before it")
				}
				fs["simbench"] = "exec"
				s.built++
			case len(words) == 3 && words[0] == "chmod" && words[1] == "+x":
				if fs[words[2]] == "" {
					return fail("chmod %s: no such file", words[2])
				}
				fs[words[2]] = "exec"
			case len(words) == 3 && words[0] == "rm" && words[1] == "-rf":
				for p := range fs {
					if ok, _ := path.Match(words[2], p); ok {
						delete(fs, p)
					}
				}
			case strings.HasPrefix(line, `if [ "$runs" != 0 ]; then`), strings.HasPrefix(line, `echo "::error::`), line == "fi":
				// the merge's warning: no state
			case regexp.MustCompile(`^echo "(\w+)=\$(\w+)" >> "\$GITHUB_OUTPUT"$`).MatchString(line):
				m := regexp.MustCompile(`^echo "(\w+)=\$(\w+)"`).FindStringSubmatch(line)
				v, ok := vars[m[2]]
				if !ok {
					return fail("%q: $%s is not set", line, m[2])
				}
				if steps[st.ID] == nil {
					steps[st.ID] = map[string]string{}
				}
				steps[st.ID][m[1]] = v
			default:
				variable, cmd := "", line
				if m := regexp.MustCompile(`^(\w+)=\$\((.*)\)$`).FindStringSubmatch(line); m != nil {
					variable, cmd = m[1], m[2]
				}
				words = strings.Fields(cmd)
				if len(words) == 0 || words[0] != "./simbench" {
					return fail("run line %q: the test does not know what it does", line)
				}
				if fs["simbench"] != "exec" {
					return fail("runs ./simbench, which is not an executable here (built in this job, or downloaded and chmod +x)")
				}
				args := expandGlobs(words[1:], fs, nullglob)
				out, ok := s.simbench(label, round, args, shard, shards, fs)
				if !ok {
					return &ghJobState{result: "failure"}
				}
				if variable != "" {
					vars[variable] = out
				}
			}
		}
	}
	state := &ghJobState{result: "success", outputs: map[string]string{}}
	for k, v := range j.Outputs {
		e, err := expandExpr(v)
		if err != nil {
			return fail("output %s: %v", k, err)
		}
		state.outputs[k] = e
	}
	return state
}

// expandGlobs expands words holding * against the runner's top folders,
// as bash does (sorted; with nullglob, a glob matching none is dropped).
func expandGlobs(words []string, fs map[string]string, nullglob bool) []string {
	var out []string
	for _, w := range words {
		if !strings.Contains(w, "*") {
			out = append(out, w)
			continue
		}
		var m []string
		for p := range fs {
			if ok, _ := path.Match(w, p); ok {
				m = append(m, p)
			}
		}
		slices.Sort(m)
		if len(m) == 0 && !nullglob {
			m = []string{w}
		}
		out = append(out, m...)
	}
	return out
}

// simbench stands for one ./simbench sweep command: it checks the folders
// it is given are those of whole rounds, records it, and returns what it
// prints (--plan) and leaves (--shard: its --out, with files when its
// slice is not empty).
func (s *ghSim) simbench(label string, round int, args []string, shard, shards int, fs map[string]string) (string, bool) {
	where := fmt.Sprintf("job %s: simbench %s: ", label, strings.Join(args, " "))
	mode := ""
	for _, m := range []string{"--plan", "--shard", "--merge"} {
		if slices.Contains(args, m) {
			mode = m
		}
	}
	if arg(args, 0) != "sweep" || mode == "" {
		s.problems = append(s.problems, where+"want sweep with --plan, --shard or --merge")
		return "", false
	}
	dirs := dirArgs(args)
	// The folders must be every shard folder of rounds 1 to seen, and no other.
	seen := 0
	for _, d := range dirs {
		a := s.artifacts[path.Base(d)]
		if a == nil || a.round == 0 {
			s.problems = append(s.problems, fmt.Sprintf("%sgiven %q, which is no shard's folder", where, d))
			return "", false
		}
		seen = max(seen, a.round)
	}
	var want []string
	for _, n := range s.uploaded {
		if a := s.artifacts[n]; a.round > 0 && a.round <= seen {
			want = append(want, n)
		}
	}
	var got []string
	for _, d := range dirs {
		got = append(got, path.Base(d))
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		s.problems = append(s.problems, fmt.Sprintf("%sgiven the folders %q, not every folder of rounds 1 to %d, %q", where, got, seen, want))
		seen = -1
	}
	s.runs = append(s.runs, ghRun{job: label, round: round, args: args, seen: seen})
	if seen < 0 || seen >= len(s.counts) {
		return "0", seen >= 0
	}
	needed := s.counts[seen]
	if mode == "--shard" && needed == 0 {
		s.problems = append(s.problems, fmt.Sprintf("%sruns after its round's plan listed no run: skip it then", where))
	}
	out, _ := flagValue(args, "--out")
	switch mode {
	case "--plan":
		fs[out] = "dir"
		return strconv.Itoa(needed), true
	case "--merge":
		if needed != 0 {
			return "", false // the merge names the missing runs and exits 1
		}
		fs[out] = "dir"
		return "", true
	}
	v, _ := flagValue(args, "--shard")
	is, ns, _ := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		s.problems = append(s.problems, fmt.Sprintf("%s--shard %q, want I/N with 0 ≤ I < N", where, v))
		return "", false
	}
	if shards > 0 && (n != shards || i != shard) {
		s.problems = append(s.problems, fmt.Sprintf("%s--shard %s in matrix value %d of %d: want --shard %d/%d", where, v, shard, shards, shard, shards))
	}
	fs[out] = "emptydir"
	if i < needed {
		fs[out] = "shard"
	}
	return "", true
}

// dirArgs returns a sweep command's folder arguments: the words after the
// scenario that are neither flags nor their values.
func dirArgs(args []string) []string {
	var dirs []string
	for i := 2; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--shard" || a == "--out":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			dirs = append(dirs, a)
		}
	}
	return dirs
}

// sweepFlags returns a sweep command without its mode, folders and --out:
// what every command of one sweep must share.
func sweepFlags(args []string) string {
	var keep []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--shard" || a == "--out":
			i++
		case a == "--plan" || a == "--merge":
		case i >= 2 && !strings.HasPrefix(a, "-"):
		default:
			keep = append(keep, a)
		}
	}
	return strings.Join(keep, " ")
}

// tier3Counts are the runs the tier3 decision sweep needed after 0, 1, …
// rounds (measured before 2026-12: simbench sweep tier3 --plan after each
// round of 2 shards). On 2026-12-07 it took 13 rounds with runs
// (docs/fleets-and-sweeps.md); these shorter counts drive the checks of
// the driver and the workflow through a complete sweep, and keep
// testdata/commands.jsonl, which lists every command they run, short.
var tier3Counts = []int{6, 1, 21, 15, 1, 0}

// checkWorkflows checks what docs/fleets-and-sweeps.md and the workflows' comments say,
// by simulating them: one go build, whose binary every other job
// downloads and makes executable; rounds 1 to R, each after the one
// before and only when its plan was not empty; in every round the plan
// and each shard given exactly the folders of the rounds before (also when
// the round's other shards finish first), the shards wired to the matrix
// (--shard ${{ matrix.shard }}/N over 0 to N-1, not cancelled when one
// fails), each uploading its own artifact; and a merge after every round
// given every round's folders; one sweep's flags throughout. The tier3
// sweep completes; a sweep needing more rounds than there are ends in a
// failed merge; a sweep done after one round skips the rest.
func checkWorkflows(wf, round *workflow) []string {
	var problems []string
	sh := round.Jobs["shard"]
	if sh == nil || sh.Strategy == nil || sh.Strategy.FailFast == nil || *sh.Strategy.FailFast {
		problems = append(problems, roundFile+": job shard: want fail-fast: false, so that one shard failing leaves the others running")
	}
	if sh != nil && sh.Strategy != nil {
		for i, v := range sh.Strategy.Matrix.Shard {
			if v != i {
				problems = append(problems, fmt.Sprintf("%s: job shard: matrix shard %v, want 0 to N-1", roundFile, sh.Strategy.Matrix.Shard))
				break
			}
		}
	}
	rounds := 0
	for wf.Jobs["round-"+strconv.Itoa(rounds+1)] != nil {
		rounds++
	}
	if rounds == 0 {
		problems = append(problems, workflowFile+": no job round-1")
	}
	for k := 1; k <= rounds; k++ {
		j := wf.Jobs["round-"+strconv.Itoa(k)]
		want := needsList{"build"}
		if k > 1 {
			want = needsList{"round-" + strconv.Itoa(k-1)}
		}
		if !slices.Equal(j.Needs, want) || j.With["round"] != strconv.Itoa(k) {
			problems = append(problems, fmt.Sprintf("%s: job round-%d: needs %q with round %q, want %q with round %d", workflowFile, k, j.Needs, j.With["round"], want, k))
		}
	}
	if m := wf.Jobs["merge"]; m == nil || len(m.Needs) != rounds+1 {
		problems = append(problems, fmt.Sprintf("%s: want a job merge that needs build and the %d rounds", workflowFile, rounds))
	}
	cases := []struct {
		name   string
		counts []int
		merged bool
	}{
		{"tier3", tier3Counts, true},
		{"one round", []int{3, 0}, true},
		{"more rounds than the workflow has", slices.Repeat([]int{5}, rounds+2), false},
	}
	for _, c := range cases {
		s := simulate(wf, round, c.counts)
		problems = append(problems, s.problems...)
		if s.built != 1 {
			problems = append(problems, fmt.Sprintf("%s: %s: simbench built %d times, want once (a devel build's run files name its executable's hash)", workflowFile, c.name, s.built))
		}
		flags := ""
		merged, roundsRun := false, 0
		for _, r := range s.runs {
			if f := sweepFlags(r.args); flags == "" {
				flags = f
			} else if f != flags {
				problems = append(problems, fmt.Sprintf("job %s runs sweep %q, another %q: want one sweep", r.job, f, flags))
			}
			switch {
			case r.round > 0 && r.seen != r.round-1:
				problems = append(problems, fmt.Sprintf("%s: job %s of round %d is given the folders of rounds 1 to %d, want 1 to %d", c.name, r.job, r.round, r.seen, r.round-1))
			case r.round == 0 && slices.Contains(r.args, "--merge"):
				merged = r.seen >= 0 && r.seen < len(c.counts) && c.counts[r.seen] == 0
			}
			roundsRun = max(roundsRun, r.round)
		}
		want := min(len(c.counts), rounds)
		if merged != c.merged || roundsRun != want {
			problems = append(problems, fmt.Sprintf("%s: %s: the merge of the whole sweep %v after %d rounds, want %v after %d", workflowFile, c.name, merged, roundsRun, c.merged, want))
		}
	}
	return problems
}

// workflowCommands returns the simbench commands the workflows run for
// the tier3 sweep, as the steps see them.
func workflowCommands(wf, round *workflow) []command {
	var out []command
	for _, r := range simulate(wf, round, tier3Counts).runs {
		out = append(out, command{Source: workflowFile + " job " + r.job, Args: r.args})
	}
	return out
}
