package deploy

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
)

// roundsFile is the driver of a sweep's rounds on Kubernetes.
const roundsFile = "deploy/sweep/rounds.sh"

// appliedKey names, among the files the checks read, the Jobs rounds.sh
// applied when driven through the tier3 sweep (see drive).
const appliedKey = roundsFile + " (as applied)"

// sweepImage is the image the checks give rounds.sh (IMAGE) and expect in
// every Job it applies.
const sweepImage = "registry.example.com/simbench:v1.2.3"

// fakeKubectl stands for kubectl: it logs each call to $FAKE/calls, keeps
// what apply reads in $FAKE/applied.yaml, answers get job with Complete
// (Failed for the Job $FAKE_FAIL names, no condition for the Jobs
// $FAKE_PENDING and $FAKE_RUNNING name) and get pods with Succeeded
// (Pending for $FAKE_PENDING's, Running for $FAKE_RUNNING's), and logs of
// a plan Job with the next line of $FAKE/counts after a warning line, as a
// plan pod's log could hold.
const fakeKubectl = `#!/bin/sh
echo "$*" >> "$FAKE/calls"
case $1 in
apply)
	cat >> "$FAKE/applied.yaml"
	echo --- >> "$FAKE/applied.yaml"
	echo "job.batch created"
	;;
get)
	case $2 in
	pods)
		case ${4#job-name=} in
		"${FAKE_PENDING:-}") echo "Pending" ;;
		"${FAKE_RUNNING:-}") echo "Running" ;;
		*) echo "Succeeded" ;;
		esac
		;;
	"job/${FAKE_FAIL:-}") echo "FailureTarget Failed" ;;
	"job/${FAKE_PENDING:-}" | "job/${FAKE_RUNNING:-}") echo "" ;;
	*) echo "SuccessCriteriaMet Complete" ;;
	esac
	;;
logs)
	case $2 in
	*-plan)
		echo "simbench: warning: a line before the count"
		head -n 1 "$FAKE/counts"
		tail -n +2 "$FAKE/counts" > "$FAKE/counts.next"
		mv "$FAKE/counts.next" "$FAKE/counts"
		;;
	*) echo "merged" ;;
	esac
	;;
*) echo "fake kubectl: $*?" >&2; exit 2 ;;
esac
`

// fakeDate stands for date +%s: a clock that moves 1000 s at each look,
// so that the driver's waits run out at once.
const fakeDate = `#!/bin/sh
n=$(cat "$FAKE/clock" 2>/dev/null || echo 0)
echo $((n + 1000)) > "$FAKE/clock"
echo "$n"
`

// driven is what one run of rounds.sh did.
type driven struct {
	applied string   // the Jobs, YAML documents
	calls   []string // kubectl's arguments, call by call
	stdout  string
	stderr  string
	err     error // the script's exit
}

// drive runs the script text with args, IMAGE=sweepImage, a fake kubectl
// whose plan Jobs print counts in turn and a fake clock, with env added to
// the environment (a variable in env replaces the one set before).
func drive(script string, counts []int, args []string, env ...string) (*driven, error) {
	dir, err := os.MkdirTemp("", "rounds")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var lines strings.Builder
	for _, c := range counts {
		fmt.Fprintln(&lines, c)
	}
	for name, text := range map[string]string{"kubectl": fakeKubectl, "date": fakeDate, "rounds.sh": script, "counts": lines.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command("sh", append([]string{filepath.Join(dir, "rounds.sh")}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "FAKE="+dir, "POLL=0", "IMAGE="+sweepImage)
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	d := &driven{stdout: stdout.String(), err: cmd.Run()}
	d.stdout, d.stderr = stdout.String(), stderr.String()
	applied, _ := os.ReadFile(filepath.Join(dir, "applied.yaml"))
	calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
	d.applied, d.calls = string(applied), strings.Split(strings.TrimSpace(string(calls)), "\n")
	return d, nil
}

// appliedOrder returns the names of the Jobs in the order applied.
func appliedOrder(applied string) []string {
	var names []string
	for line := range strings.Lines(applied) {
		if n, ok := strings.CutPrefix(line, "  name: "); ok {
			names = append(names, strings.TrimSpace(n))
		}
	}
	return names
}

// checkWaits checks that the driver saw each Job it applied complete
// before it applied the next, and read each plan's log before going on.
func checkWaits(d *driven) []string {
	names := appliedOrder(d.applied)
	var problems []string
	k := -1 // the Job applied last
	waited := true
	for _, c := range d.calls {
		switch {
		case c == "apply -f -":
			if k >= 0 && !waited {
				problems = append(problems, fmt.Sprintf("%s: applies Job %s before Job %s has completed", roundsFile, names[k+1], names[k]))
			}
			k, waited = k+1, false
		case k >= 0 && k < len(names) && strings.HasPrefix(c, "get job/"+names[k]+" "):
			waited = true
		}
	}
	return problems
}

// roundJobs returns the plan and shard Jobs of rounds 1, 2, … as applied.
func (m *manifests) roundJobs() (plans, shards []*batchv1.Job) {
	for k := 1; ; k++ {
		p := m.jobs[fmt.Sprintf("simbench-sweep-r%d-plan", k)]
		if p == nil {
			return plans, shards
		}
		plans = append(plans, p)
		if s := m.jobs[fmt.Sprintf("simbench-sweep-r%d-shards", k)]; s != nil {
			shards = append(shards, s)
		}
	}
}

// The driver runs the rounds the sweep takes and then the merge, each Job
// after the last one completed; a failed Job, a plan that prints no
// count, or more rounds than ROUNDS stop it with an error and no merge.
func TestRoundsDriver(t *testing.T) {
	script := readFiles(t)[roundsFile]
	d, err := drive(script, []int{6, 1, 0}, []string{"tier3", "--duration", "20s", "--seeds", "2"}, "SHARDS=2", "DEADLINE=900")
	if err != nil {
		t.Fatal(err)
	}
	if d.err != nil {
		t.Fatalf("%v\n%s", d.err, d.stderr)
	}
	if got, want := appliedOrder(d.applied), []string{"simbench-sweep-r1-plan", "simbench-sweep-r1-shards", "simbench-sweep-r2-plan", "simbench-sweep-r2-shards", "simbench-sweep-r3-plan", "simbench-sweep-merge"}; !slices.Equal(got, want) {
		t.Errorf("applied %q, want %q", got, want)
	}
	for _, p := range checkWaits(d) {
		t.Error(p)
	}
	if !strings.Contains(d.stdout, "round 2: 1 runs") || !strings.HasSuffix(d.stdout, "merged\n") {
		t.Errorf("printed %q, want each round's count and the merge's log", d.stdout)
	}
	m, problems := parseManifests(map[string]string{appliedKey: d.applied})
	for _, p := range problems {
		t.Error(p)
	}
	_, shards := m.roundJobs()
	for _, j := range shards {
		if c := j.Spec.Completions; c == nil || *c != 2 {
			t.Errorf("Job %s: completions %s, want SHARDS=2", j.Name, ptrString(c))
		}
	}
	for name, j := range m.jobs {
		if d := j.Spec.ActiveDeadlineSeconds; d == nil || *d != 900 {
			t.Errorf("Job %s: activeDeadlineSeconds %v, want DEADLINE=900", name, d)
		}
		if args := j.Spec.Template.Spec.Containers[0].Args; !slices.Equal(args[:6], []string{"sweep", "tier3", "--duration", "20s", "--seeds", "2"}) {
			t.Errorf("Job %s: args %q, want the scenario and sweep flags given", name, args)
		}
	}
	if want := []string{"/results/sweep/r1/shard-0", "/results/sweep/r1/shard-1", "/results/sweep/r2/shard-0", "/results/sweep/r2/shard-1"}; !slices.Equal(flagValues(m.jobs[sweepMerge].Spec.Template.Spec.Containers[0].Args, "--merge"), want) {
		t.Errorf("merge args %q, want the folders %q", m.jobs[sweepMerge].Spec.Template.Spec.Containers[0].Args, want)
	}

	for _, tt := range []struct {
		name   string
		counts []int
		args   []string
		env    []string
		want   string
		last   string // the last Job applied
	}{
		{"a shard fails", []int{6, 1, 0}, nil, []string{"FAKE_FAIL=simbench-sweep-r2-shards"}, "Job simbench-sweep-r2-shards failed", "simbench-sweep-r2-shards"},
		{"the plan prints no count", nil, nil, nil, "not how many runs the round needs", "simbench-sweep-r1-plan"},
		{"too many rounds", []int{5, 5, 5, 5}, nil, []string{"ROUNDS=3"}, "not complete after 3 rounds", "simbench-sweep-r3-shards"},
		{"a quote", []int{0}, []string{"tier3", `--cap="4"`}, nil, "quote", ""},
		{"no image", []int{0}, nil, []string{"IMAGE="}, "set IMAGE to the image built for this version", ""},
		{"a moving tag", []int{0}, nil, []string{"IMAGE=simbench:latest"}, "not a tag that moves", ""},
		{"the placeholder", []int{0}, nil, []string{"IMAGE=simbench:VERSION"}, "not a tag that moves", ""},
		{"a deadline not a number", []int{0}, nil, []string{"DEADLINE=30m"}, `"30m": SHARDS, ROUNDS, DEADLINE, START and POLL take a whole number`, ""},
		{"a pod never starts", []int{6, 1, 0}, nil, []string{"FAKE_PENDING=simbench-sweep-r1-shards"}, "no pod of Job simbench-sweep-r1-shards has started after 1000 s (START=300; pods: Pending)", "simbench-sweep-r1-shards"},
		{"a Job never ends", []int{6, 1, 0}, nil, []string{"FAKE_RUNNING=simbench-sweep-r2-plan"}, "Job simbench-sweep-r2-plan has not finished 2000 s after it was applied (DEADLINE=1800)", "simbench-sweep-r2-plan"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := drive(script, tt.counts, tt.args, tt.env...)
			if err != nil {
				t.Fatal(err)
			}
			names := appliedOrder(d.applied)
			if d.err == nil || !strings.Contains(d.stderr, tt.want) || len(names) > 0 != (tt.last != "") || tt.last != "" && names[len(names)-1] != tt.last {
				t.Errorf("exit %v, stderr %q, applied %q: want an error saying %q after applying %q", d.err, d.stderr, names, tt.want, tt.last)
			}
		})
	}
}

// expandIndex returns the folders an Indexed Job's out names, 0 to n-1.
func expandIndex(out string, n int) []string {
	var dirs []string
	for i := range n {
		dirs = append(dirs, expand(out, indexRef, i))
	}
	return dirs
}

// checkRounds checks the Jobs rounds.sh applied for a sweep: round K's
// plan (one pod) and shards (an Indexed Job of N pods, completions and
// parallelism the N of --shard $(JOB_COMPLETION_INDEX)/N, pod I writing
// its own folder) are both given exactly the folders the shards of rounds
// 1 to K-1 wrote; the merge all of them; every Job on the shared claim,
// restartPolicy Never, the same scenario and flags.
func (m *manifests) checkRounds(image string, wantRounds int) []string {
	plans, shards := m.roundJobs()
	merge := m.jobs[sweepMerge]
	if len(plans) != wantRounds || len(shards) != wantRounds-1 || merge == nil {
		return []string{fmt.Sprintf("%s: applied %d plans, %d shard Jobs and merge %v, want %d, %d and a merge for the tier3 sweep", roundsFile, len(plans), len(shards), merge != nil, wantRounds, wantRounds-1)}
	}
	var problems []string
	var before []string // the folders of the rounds so far
	flags := ""
	same := func(where string, args []string) {
		if f := sweepFlags(args); flags == "" {
			flags = f
		} else if f != flags {
			problems = append(problems, fmt.Sprintf("%s sweeps %q, another Job %q: want one sweep", where, f, flags))
		}
	}
	for k, plan := range plans {
		dirs, p, c := m.checkMerge(plan, image, "sweep", "--plan")
		problems = append(problems, p...)
		where := "Job " + plan.Name
		if c == nil {
			continue
		}
		same(where, c.Args)
		if !slices.Equal(dirs, before) {
			problems = append(problems, fmt.Sprintf("%s: plans from %q, want the folders of the rounds before, %q", where, dirs, before))
		}
		if k == len(shards) {
			break
		}
		s := shards[k]
		p, n, out, sc := m.checkIndexed(s, image, "sweep", "--shard")
		problems = append(problems, p...)
		if sc == nil || n == 0 {
			continue
		}
		same("Job "+s.Name, sc.Args)
		if got := flagValues(sc.Args, "--shard"); len(got) < 1 || !slices.Equal(got[1:], before) {
			problems = append(problems, fmt.Sprintf("Job %s: shards from %q, want the folders of the rounds before, %q", s.Name, got, before))
		}
		made := expandIndex(out, n)
		for _, d := range made {
			if slices.Contains(before, d) {
				problems = append(problems, fmt.Sprintf("Job %s: writes %s, which a round before wrote", s.Name, d))
			}
		}
		before = append(before, made...)
	}
	dirs, p, mc := m.checkMerge(merge, image, "sweep", "--merge")
	problems = append(problems, p...)
	if mc != nil {
		same("Job "+sweepMerge, mc.Args)
		if !slices.Equal(dirs, before) {
			problems = append(problems, fmt.Sprintf("Job %s: merges %q, want every round's folders, %q", sweepMerge, dirs, before))
		}
	}
	return problems
}

// driveTier3 runs the script through the tier3 sweep's rounds and returns
// the Jobs it applied, with the problems in how it waited.
func driveTier3(script string) (string, []string) {
	if r, ok := tier3Drives[script]; ok {
		return r.applied, r.problems
	}
	applied, problems := driveTier3Once(script)
	tier3Drives[script] = struct {
		applied  string
		problems []string
	}{applied, problems}
	return applied, problems
}

// tier3Drives remembers driveTier3's answer by script: the broken copies
// of the other files drive the same one.
var tier3Drives = map[string]struct {
	applied  string
	problems []string
}{}

// driveTier3Once is driveTier3 without the memory.
func driveTier3Once(script string) (string, []string) {
	d, err := drive(script, tier3Counts, nil)
	if err != nil {
		return "", []string{err.Error()}
	}
	if d.err != nil {
		return d.applied, []string{fmt.Sprintf("%s: %v: %s", roundsFile, d.err, d.stderr)}
	}
	return d.applied, checkWaits(d)
}
