package deploy

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"
)

// podTemplate is one pod template found in a manifest: a Pod, or the
// template of a workload that makes pods.
type podTemplate struct {
	file   string // the file it is in, from the repository's root
	object string // Kind/name of the object holding it
	kind   string
	job    *batchv1.JobSpec // the Job (or a CronJob's Job) that runs it, if one does
	meta   *metav1.ObjectMeta
	spec   *corev1.PodSpec
}

func (p podTemplate) String() string { return p.file + ": " + p.object }

// podTemplates returns every pod template in the YAML documents of the
// manifest files (every deploy/*.yaml):
// Pods, and the templates of Deployments, StatefulSets, DaemonSets,
// ReplicaSets, Jobs and CronJobs, found as the API server's pod security
// admission finds them. Documents of other kinds hold no pod.
func podTemplates(files map[string]string) ([]podTemplate, []string) {
	var found []podTemplate
	problems := eachDocument(files, func(p string, doc []byte) error {
		t, err := podTemplateOf(doc)
		if t != nil {
			t.file = p
			found = append(found, *t)
		}
		return err
	})
	return found, problems
}

// podTemplateOf decodes one document and returns its pod template, or nil
// for a kind that makes no pods.
func podTemplateOf(doc []byte) (*podTemplate, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	var t podTemplate
	var obj metav1.Object
	decode := func(o any) error { return yaml.UnmarshalStrict(doc, o) }
	var err error
	switch tm.Kind {
	case "Pod":
		var o corev1.Pod
		err, obj, t.meta, t.spec = decode(&o), &o, &o.ObjectMeta, &o.Spec
	case "Deployment":
		var o appsv1.Deployment
		err, obj, t.meta, t.spec = decode(&o), &o, &o.Spec.Template.ObjectMeta, &o.Spec.Template.Spec
	case "StatefulSet":
		var o appsv1.StatefulSet
		err, obj, t.meta, t.spec = decode(&o), &o, &o.Spec.Template.ObjectMeta, &o.Spec.Template.Spec
	case "DaemonSet":
		var o appsv1.DaemonSet
		err, obj, t.meta, t.spec = decode(&o), &o, &o.Spec.Template.ObjectMeta, &o.Spec.Template.Spec
	case "ReplicaSet":
		var o appsv1.ReplicaSet
		err, obj, t.meta, t.spec = decode(&o), &o, &o.Spec.Template.ObjectMeta, &o.Spec.Template.Spec
	case "Job":
		var o batchv1.Job
		err, obj, t.job, t.meta, t.spec = decode(&o), &o, &o.Spec, &o.Spec.Template.ObjectMeta, &o.Spec.Template.Spec
	case "CronJob":
		var o batchv1.CronJob
		js := &o.Spec.JobTemplate.Spec
		err, obj, t.job, t.meta, t.spec = decode(&o), &o, js, &js.Template.ObjectMeta, &js.Template.Spec
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tm.Kind, err)
	}
	t.kind, t.object = tm.Kind, tm.Kind+"/"+obj.GetName()
	return &t, nil
}

// restricted is the level every pod template must pass: the restricted
// Pod Security Standard at its latest version, as a namespace labelled
// pod-security.kubernetes.io/enforce: restricted enforces it.
var restricted = psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}

// checkPodSecurity evaluates every pod template with the checks the API
// server's pod security admission runs (k8s.io/pod-security-admission's
// default checks) at the restricted level and names each that refuses
// one: the file, the object and the check's reason and detail.
func checkPodSecurity(templates []podTemplate) []string {
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, t := range templates {
		for _, r := range eval.EvaluatePod(restricted, t.meta, t.spec) {
			if !r.Allowed {
				problems = append(problems, fmt.Sprintf("%s: refused by the %s Pod Security Standard: %s (%s)", t, restricted, r.ForbiddenReason, r.ForbiddenDetail))
			}
		}
	}
	return problems
}

// checkBounds checks that every Job ends on its own and is cleaned up
// (activeDeadlineSeconds, ttlSecondsAfterFinished) and that every
// container asks for CPU and memory and is limited in both, so that a
// namespace with a ResourceQuota admits the pods and a runaway one is
// stopped. An emptyDir is bounded by a sizeLimit.
func checkBounds(templates []podTemplate) []string {
	var problems []string
	for _, t := range templates {
		if t.job != nil {
			if d := t.job.ActiveDeadlineSeconds; d == nil || *d <= 0 {
				problems = append(problems, fmt.Sprintf("%s: no activeDeadlineSeconds: a Job whose pod never starts or never ends runs forever", t))
			}
			if ttl := t.job.TTLSecondsAfterFinished; ttl == nil || *ttl < 0 {
				problems = append(problems, fmt.Sprintf("%s: no ttlSecondsAfterFinished: the finished Job and its pods are never cleaned up", t))
			}
		}
		for _, c := range slices.Concat(t.spec.InitContainers, t.spec.Containers) {
			for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if q, ok := c.Resources.Requests[name]; !ok || q.Sign() <= 0 {
					problems = append(problems, fmt.Sprintf("%s: container %s requests no %s", t, c.Name, name))
				}
				l, ok := c.Resources.Limits[name]
				if !ok || l.Sign() <= 0 {
					problems = append(problems, fmt.Sprintf("%s: container %s has no %s limit", t, c.Name, name))
				} else if q, ok := c.Resources.Requests[name]; ok && q.Cmp(l) > 0 {
					problems = append(problems, fmt.Sprintf("%s: container %s requests %s %s, above its limit %s", t, c.Name, name, q.String(), l.String()))
				}
			}
		}
		for _, v := range t.spec.Volumes {
			if v.EmptyDir != nil && v.EmptyDir.SizeLimit == nil {
				problems = append(problems, fmt.Sprintf("%s: emptyDir %s has no sizeLimit", t, v.Name))
			}
		}
	}
	return problems
}

// Every pod template in deploy/ passes the restricted Pod Security
// Standard as the API server's admission evaluates it.
func TestRestrictedPodSecurity(t *testing.T) {
	files := readFiles(t)
	templates, problems := podTemplates(files)
	for _, p := range problems {
		t.Error(p)
	}
	// Each kind of pod the manifests make is looked at: the fleet's two
	// Deployments and two Jobs, and the sweep's workers and merge Jobs.
	var seen []string
	for _, tp := range templates {
		seen = append(seen, tp.object)
	}
	for _, want := range []string{"Deployment/" + redisName, "Deployment/" + serveName, "Job/" + workers, "Job/" + fleetMerge, "Job/" + sweepWorkers, "Job/" + sweepWorkMerge} {
		if !slices.Contains(seen, want) {
			t.Errorf("no pod template of %s among %q", want, seen)
		}
	}
	for _, p := range checkPodSecurity(templates) {
		t.Error(p)
	}
}

// Every Job has a deadline and a time to live, every container requests
// and is limited in CPU and memory.
func TestBounds(t *testing.T) {
	templates, problems := podTemplates(readFiles(t))
	for _, p := range append(problems, checkBounds(templates)...) {
		t.Error(p)
	}
}

// Pod templates are found in every kind that makes pods, and a refusal
// names the file, the object and the check; kinds without pods are
// passed over.
func TestPodTemplatesOfEveryKind(t *testing.T) {
	const pod = `
    spec:
      containers:
        - name: c
          image: x:1
`
	indent := func(s, by string) string {
		var b strings.Builder
		for line := range strings.Lines(s) {
			b.WriteString(by + line)
		}
		return b.String()
	}
	doc := `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {a: b}
---
apiVersion: v1
kind: Pod
metadata: {name: a-pod}
spec:
  containers:
    - name: c
      image: x:1
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: a-set}
spec:
  selector: {matchLabels: {a: b}}
  serviceName: s
  template:` + pod + `---
apiVersion: batch/v1
kind: CronJob
metadata: {name: a-cron}
spec:
  schedule: "@daily"
  jobTemplate:
    spec:
      template:` + indent(pod, "    ")
	templates, problems := podTemplates(map[string]string{"deploy/x.yaml": doc})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	var got []string
	for _, tp := range templates {
		got = append(got, tp.String())
	}
	if want := []string{"deploy/x.yaml: Pod/a-pod", "deploy/x.yaml: StatefulSet/a-set", "deploy/x.yaml: CronJob/a-cron"}; !slices.Equal(got, want) {
		t.Fatalf("found %q, want %q", got, want)
	}
	refused := checkPodSecurity(templates)
	for _, want := range got {
		if !slices.ContainsFunc(refused, func(p string) bool {
			return strings.HasPrefix(p, want+": refused by the restricted:latest Pod Security Standard: runAsNonRoot != true")
		}) {
			t.Errorf("no refusal of %s for runAsNonRoot; got %q", want, refused)
		}
	}
	bounds := checkBounds(templates)
	if !slices.Contains(bounds, "deploy/x.yaml: CronJob/a-cron: no activeDeadlineSeconds: a Job whose pod never starts or never ends runs forever") ||
		slices.ContainsFunc(bounds, func(p string) bool { return strings.Contains(p, "a-set: no activeDeadlineSeconds") }) {
		t.Errorf("bounds %q: want the CronJob's Job without a deadline named, the StatefulSet not", bounds)
	}
}
