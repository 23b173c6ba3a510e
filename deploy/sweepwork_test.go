package deploy

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
)

// The Jobs of a sweep on workers sharing Redis (deploy/sweep/workers.yaml
// and merge.yaml).
const (
	sweepWorkers   = "simbench-sweep-workers"
	sweepWorkMerge = "simbench-sweep-work-merge"
)

// checkSweepWork checks the sweep on workers sharing Redis: an Indexed Job
// whose pods all run at once (completions equal to parallelism, 2 or
// more) `simbench sweep … --work redis://simbench-redis:PORT/DB`, and a
// merge Job of one pod that runs the same sweep with --merge and the same
// URL and writes to the shared volume.
func (m *manifests) checkSweepWork(image string) []string {
	w, merge := m.jobs[sweepWorkers], m.jobs[sweepWorkMerge]
	if w == nil || merge == nil {
		return []string{fmt.Sprintf("deploy/sweep: want Jobs %s and %s", sweepWorkers, sweepWorkMerge)}
	}
	where := "Job " + sweepWorkers
	problems := checkJobPod(w)
	s := w.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		problems = append(problems, where+": want completionMode: Indexed, so that a failed worker is started again on its own")
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism || *s.Completions < 2 {
		problems = append(problems, fmt.Sprintf("%s: completions %s and parallelism %s: want them equal, 2 or more (every worker at once, in one launch)", where, ptrString(s.Completions), ptrString(s.Parallelism)))
	}
	wc, p := simbenchContainer(&s.Template.Spec, where, image)
	problems = append(problems, p...)
	mwhere := "Job " + sweepWorkMerge
	problems = append(problems, checkJobPod(merge)...)
	if merge.Spec.CompletionMode != nil && *merge.Spec.CompletionMode == batchv1.IndexedCompletion {
		problems = append(problems, mwhere+": a merge is one pod, not Indexed")
	}
	mc, p := simbenchContainer(&merge.Spec.Template.Spec, mwhere, image)
	problems = append(problems, p...)
	if wc == nil || mc == nil {
		return problems
	}
	for _, c := range []struct {
		where, job string
		args       []string
		flag       string
	}{{where, sweepWorkers, wc.Args, "--work"}, {mwhere, sweepWorkMerge, mc.Args, "--merge"}} {
		if arg(c.args, 0) != "sweep" {
			problems = append(problems, fmt.Sprintf("%s: runs %q, want sweep", c.where, arg(c.args, 0)))
		}
		problems = append(problems, m.checkURL(c.job, c.args, c.flag, "redis", redisName)...)
	}
	work, _ := flagValue(wc.Args, "--work")
	if got := flagValues(mc.Args, "--merge"); !slices.Equal(got, []string{work}) {
		problems = append(problems, fmt.Sprintf("%s: merges %q, want the workers' store alone, %q", mwhere, got, work))
	}
	if a, b := sweepWorkArgs(wc.Args), sweepWorkArgs(mc.Args); !slices.Equal(a, b) {
		problems = append(problems, fmt.Sprintf("%s sweeps %q, %s %q: want one sweep", mwhere, b, where, a))
	}
	out, _ := flagValue(mc.Args, "--out")
	return append(problems, m.onSharedVolume(mwhere, mc, &merge.Spec.Template.Spec, out)...)
}

// sweepWorkArgs are a sweep's args without --work, --merge and --out and
// their values: the scenario and the sweep's own flags.
func sweepWorkArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--work", "--merge", "--out":
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}
