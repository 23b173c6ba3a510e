package deploy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// workflowFile is the shipped GitHub Actions workflow, from the root: a
// sweep on workers sharing a Redis service container.
const workflowFile = ".github/workflows/sweep-work.yml"

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
	Services map[string]struct {
		Image string   `yaml:"image"`
		Ports []string `yaml:"ports"`
	} `yaml:"services"`
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

// workersLoop is how the workers step starts its workers: for VAR in 0
// 1 … N-1; do.
var workersLoop = regexp.MustCompile(`(?m)^\s*for (\w+) in ([0-9 ]+); do$`)

// simbenchLines returns the simbench command lines of a step's script, as
// its words without the program, the redirections and a final &, and
// whether each runs in the background.
func simbenchLines(script string) (lines [][]string, background []bool) {
	for _, line := range strings.Split(script, "\n") {
		words := strings.Fields(line)
		if len(words) == 0 || words[0] != "./simbench" {
			continue
		}
		bg := words[len(words)-1] == "&"
		if bg {
			words = words[:len(words)-1]
		}
		if i := slices.IndexFunc(words, func(w string) bool { return strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") }); i >= 0 {
			words = words[:i]
		}
		lines, background = append(lines, words[1:]), append(background, bg)
	}
	return lines, background
}

// checkWorkflow checks what docs/fleets-and-sweeps.md and the workflow's
// comments say: one job sweep with a Redis service container whose port is
// published; simbench built once, from the checkout; a step that starts 2
// or more workers `sweep … --work redis://localhost:PORT/DB` at once, in
// the background, and waits for each by its process ID (a bare wait
// returns 0 whatever the workers did); a merge of the same store after it;
// one sweep's flags throughout; and the merged sweep uploaded.
func checkWorkflow(wf *workflow) []string {
	j := wf.Jobs["sweep"]
	if len(wf.Jobs) != 1 || j == nil {
		return []string{workflowFile + ": want one job, sweep: the workers share its service container"}
	}
	var problems []string
	redis, ok := j.Services["redis"]
	port := ""
	if ok {
		for _, p := range redis.Ports {
			if host, cont, found := strings.Cut(p, ":"); found && cont == "6379" {
				port = host
			}
		}
	}
	if !ok || !strings.HasPrefix(redis.Image, "redis:") || port == "" {
		problems = append(problems, workflowFile+": job sweep: want a service redis of a redis: image publishing port 6379")
	}
	if j.TimeoutMinutes <= 0 {
		problems = append(problems, workflowFile+": job sweep: want a timeout-minutes, so that no step waits forever")
	}
	builds, workers, merges := 0, 0, 0
	work, flags := "", ""
	same := func(args []string) {
		f := strings.Join(sweepWorkArgs(args), " ")
		if flags == "" {
			flags = f
		} else if f != flags {
			problems = append(problems, fmt.Sprintf("%s: sweeps %q and %q: want one sweep", workflowFile, flags, f))
		}
	}
	for _, st := range j.Steps {
		if strings.Contains(st.Run, "go build -o simbench .") {
			builds++
		}
		lines, bg := simbenchLines(st.Run)
		for i, args := range lines {
			if arg(args, 0) != "sweep" {
				problems = append(problems, fmt.Sprintf("%s: runs simbench %q, want sweep", workflowFile, arg(args, 0)))
				continue
			}
			same(args)
			if w, ok := flagValue(args, "--work"); ok {
				work = w
				n := 1
				if m := workersLoop.FindStringSubmatch(st.Run); m != nil {
					n = len(strings.Fields(m[2]))
				}
				if !bg[i] || n < 2 {
					problems = append(problems, fmt.Sprintf("%s: %d workers in the background %v: want 2 or more at once", workflowFile, n, bg[i]))
				}
				if !strings.Contains(st.Run, `wait "$p"`) {
					problems = append(problems, workflowFile+": the workers step does not wait for each worker by its process ID: a bare wait returns 0 whatever they did")
				}
				workers += n
			}
			if m := flagValues(args, "--merge"); len(m) > 0 {
				merges++
				if workers == 0 || !slices.Equal(m, []string{work}) {
					problems = append(problems, fmt.Sprintf("%s: merges %q, want the workers' store %q, after them", workflowFile, m, work))
				}
			}
		}
	}
	if want := "redis://localhost:" + port + "/"; !strings.HasPrefix(work, want) {
		problems = append(problems, fmt.Sprintf("%s: --work %q, want %sDB, the service container", workflowFile, work, want))
	}
	if builds != 1 || workers == 0 || merges != 1 {
		problems = append(problems, fmt.Sprintf("%s: simbench built %d times, %d workers, %d merges: want once, some and one", workflowFile, builds, workers, merges))
	}
	return problems
}

// workflowCommands returns the simbench commands the workflow runs, as
// its steps write them.
func workflowCommands(wf *workflow) []command {
	var out []command
	for name, j := range wf.Jobs {
		for _, st := range j.Steps {
			lines, _ := simbenchLines(st.Run)
			for _, args := range lines {
				out = append(out, command{Source: workflowFile + " job " + name, Args: args})
			}
		}
	}
	return out
}
