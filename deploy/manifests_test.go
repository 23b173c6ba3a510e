package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// The names docs/fleets-and-sweeps.md and the manifests share.
const (
	indexVar        = "JOB_COMPLETION_INDEX"
	indexRef        = "$(" + indexVar + ")"
	indexAnnotation = "metadata.annotations['batch.kubernetes.io/job-completion-index']"

	workers    = "simbench-workers"
	fleetMerge = "simbench-fleet-merge"
	serveName  = "simbench-serve"
	redisName  = "simbench-redis"
)

// manifests is every object of a set of manifest files, by name.
type manifests struct {
	jobs        map[string]*batchv1.Job
	deployments map[string]*appsv1.Deployment
	services    map[string]*corev1.Service
	claims      map[string]*corev1.PersistentVolumeClaim
	file        map[string]string // "Kind/name" → the file it is in
}

// parseManifests decodes every YAML document of files (path → text)
// strictly into the Kubernetes type its kind names: an unknown or
// duplicated field, a kind other than the four the manifests use, or an
// apiVersion that does not serve that kind is an error naming the file.
func parseManifests(files map[string]string) (*manifests, []string) {
	m := &manifests{
		jobs:        map[string]*batchv1.Job{},
		deployments: map[string]*appsv1.Deployment{},
		services:    map[string]*corev1.Service{},
		claims:      map[string]*corev1.PersistentVolumeClaim{},
		file:        map[string]string{},
	}
	return m, eachDocument(files, m.add)
}

// eachDocument calls f with every YAML document of the manifest files
// (every deploy/*.yaml), in file order, and
// returns the problems: a file that does not split into documents, and
// f's errors, each naming the file and the document's number.
func eachDocument(files map[string]string, f func(p string, doc []byte) error) []string {
	var problems []string
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if !strings.HasPrefix(p, "deploy/") || !strings.HasSuffix(p, ".yaml") {
			continue
		}
		r := kyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(files[p])))
		for n := 1; ; n++ {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", p, err))
				break
			}
			if err := f(p, doc); err != nil {
				problems = append(problems, fmt.Sprintf("%s: document %d: %v", p, n, err))
			}
		}
	}
	return problems
}

// add decodes one document of file p into m.
func (m *manifests) add(p string, doc []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	if tm.Kind == "" && tm.APIVersion == "" && len(bytes.TrimSpace(stripComments(doc))) == 0 {
		return nil // a document of comments only
	}
	want := map[string]string{"Job": "batch/v1", "Deployment": "apps/v1", "Service": "v1", "PersistentVolumeClaim": "v1"}[tm.Kind]
	if want == "" {
		return fmt.Errorf("kind %q: want Job, Deployment, Service or PersistentVolumeClaim", tm.Kind)
	}
	if tm.APIVersion != want {
		return fmt.Errorf("%s: apiVersion %q, want %q", tm.Kind, tm.APIVersion, want)
	}
	var name string
	var err error
	switch tm.Kind {
	case "Job":
		var o batchv1.Job
		err, name = yaml.UnmarshalStrict(doc, &o), o.Name
		m.jobs[name] = &o
	case "Deployment":
		var o appsv1.Deployment
		err, name = yaml.UnmarshalStrict(doc, &o), o.Name
		m.deployments[name] = &o
	case "Service":
		var o corev1.Service
		err, name = yaml.UnmarshalStrict(doc, &o), o.Name
		m.services[name] = &o
	case "PersistentVolumeClaim":
		var o corev1.PersistentVolumeClaim
		err, name = yaml.UnmarshalStrict(doc, &o), o.Name
		m.claims[name] = &o
	}
	if err != nil {
		return fmt.Errorf("%s: %w", tm.Kind, err)
	}
	key := tm.Kind + "/" + name
	if prev, ok := m.file[key]; ok {
		return fmt.Errorf("%s is defined twice (also in %s)", key, prev)
	}
	m.file[key] = p
	return nil
}

// stripComments drops YAML comment lines.
func stripComments(doc []byte) []byte {
	var out []byte
	for line := range bytes.Lines(doc) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line...)
		}
	}
	return out
}

// readFiles reads what the checks look at, keyed by the path from the
// repository's root: deploy's manifests, Dockerfile and sweep driver, the
// workflows and docs/fleets-and-sweeps.md.
func readFiles(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	read := func(p string) {
		b, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		files[p] = string(b)
	}
	err := fs.WalkDir(os.DirFS(".."), "deploy", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return fs.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || p == "deploy/Dockerfile") {
			read(p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	read(workflowFile)
	read("docs/fleets-and-sweeps.md")
	return files
}

// checkAll parses files and the workflow, and returns every way they
// disagree with each other or with what docs/fleets-and-sweeps.md says of them.
func checkAll(files map[string]string) []string {
	m, problems := parseManifests(files)
	image, p := readmeImage(files["docs/fleets-and-sweeps.md"])
	problems = append(problems, p...)
	problems = append(problems, checkDockerfile(files["deploy/Dockerfile"])...)
	problems = append(problems, m.checkFleet(image+":"+versionPlaceholder)...)
	problems = append(problems, m.checkSweepWork(image+":"+versionPlaceholder)...)
	templates, p := podTemplates(files)
	problems = append(problems, p...)
	problems = append(problems, checkPodSecurity(templates)...)
	problems = append(problems, checkBounds(templates)...)
	wf, p := parseWorkflow(workflowFile, files[workflowFile])
	problems = append(problems, p...)
	if wf != nil {
		problems = append(problems, checkWorkflow(wf)...)
	}
	return problems
}

// versionPlaceholder is the tag the fleet's manifests give the simbench
// image, which docs/fleets-and-sweeps.md replaces with the version built
// before applying them: a manifest applied as it is names no image that
// exists, rather than a tag that moves.
const versionPlaceholder = "VERSION"

// readmeImage returns the name (without the tag) docs/fleets-and-sweeps.md's
// docker build command gives the image, checking that the build stamps the
// version it tags the image with (--build-arg VERSION=V -t NAME:V, V being
// what results.json and the run keys then hold) and that the docs replace
// the manifests' NAME:VERSION with it.
func readmeImage(readme string) (string, []string) {
	re := regexp.MustCompile(`docker build -f deploy/Dockerfile --build-arg VERSION=(\S+) -t ([^\s:]+):(\S+) \.`)
	found := re.FindAllStringSubmatch(readme, -1)
	if len(found) == 0 {
		return "", []string{"docs/fleets-and-sweeps.md: no `docker build -f deploy/Dockerfile --build-arg VERSION=V -t NAME:V .` names the image and its version"}
	}
	var problems []string
	for _, f := range found {
		if f[1] != f[3] {
			problems = append(problems, fmt.Sprintf("docs/fleets-and-sweeps.md: docker build stamps version %s but tags the image %s:%s: the tag must be the version the run keys hold", f[1], f[2], f[3]))
		}
		if f[2] != found[0][2] {
			problems = append(problems, fmt.Sprintf("docs/fleets-and-sweeps.md: docker build names both %s and %s", found[0][2], f[2]))
		}
	}
	name := found[0][2]
	if want := "s|" + name + ":" + versionPlaceholder + "|" + name + ":" + found[0][3] + "|"; !strings.Contains(readme, want) {
		problems = append(problems, fmt.Sprintf("docs/fleets-and-sweeps.md: no %q puts the version built into the manifests", want))
	}
	return name, problems
}

// checkDockerfile checks the stages docs/fleets-and-sweeps.md describes (golang:1.26 to
// distroless), that the binary lands where the manifests' command
// (simbench, found on distroless's PATH) finds it, and that each file the
// build stage copies before the whole context exists in the repository.
func checkDockerfile(text string) []string {
	var problems []string
	var froms []string
	copiedBinary := false
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "FROM":
			froms = append(froms, strings.Join(f[1:], " "))
		case "COPY":
			if len(f) < 3 {
				problems = append(problems, fmt.Sprintf("deploy/Dockerfile: %q: want COPY SRC... DEST", strings.TrimSpace(line)))
				continue
			}
			if strings.HasPrefix(f[1], "--from=") {
				copiedBinary = copiedBinary || f[len(f)-1] == "/usr/local/bin/simbench"
				continue
			}
			for _, src := range f[1 : len(f)-1] {
				if src == "." {
					continue
				}
				if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(src))); err != nil {
					problems = append(problems, fmt.Sprintf("deploy/Dockerfile: COPY %s: not in the repository", src))
				}
			}
		}
	}
	if len(froms) != 2 || froms[0] != "golang:1.26 AS build" || !strings.HasPrefix(froms[1], "gcr.io/distroless/static") {
		problems = append(problems, fmt.Sprintf("deploy/Dockerfile: stages %q, want golang:1.26 AS build, then gcr.io/distroless/static…", froms))
	}
	if !copiedBinary {
		problems = append(problems, "deploy/Dockerfile: the final stage does not copy the binary to /usr/local/bin/simbench, where the manifests' command finds it")
	}
	for _, want := range []string{"ARG VERSION\n", `test -n "$VERSION"`, "-X main.version=$VERSION"} {
		if !strings.Contains(text, want) {
			problems = append(problems, fmt.Sprintf("deploy/Dockerfile: no %q: the image must be built with the version its tag names stamped in (results.json and the run keys hold it)", strings.TrimSpace(want)))
		}
	}
	return problems
}

// checkFleet checks the live fleet: one serve replica listening beyond
// loopback on the port its Service targets, a Redis behind its Service,
// an Indexed Job of N workers (completions and parallelism the N of
// --member, all at once for the rendezvous) whose --base-url and --redis
// name those Services' DNS names and ports, and a merge Job that reads
// exactly the N members' folders.
func (m *manifests) checkFleet(image string) []string {
	serve, redis := m.deployments[serveName], m.deployments[redisName]
	w, merge := m.jobs[workers], m.jobs[fleetMerge]
	if serve == nil || redis == nil || w == nil || merge == nil {
		return []string{fmt.Sprintf("deploy/fleet: want Deployments %s and %s, Jobs %s and %s", serveName, redisName, workers, fleetMerge)}
	}
	var problems []string
	where := "Deployment " + serveName
	for _, d := range []*appsv1.Deployment{serve, redis} {
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
			problems = append(problems, fmt.Sprintf("Deployment %s: want replicas: 1 (a second provider would double the limits, a second Redis split the quota)", d.Name))
		}
		if d.Spec.Selector == nil || !selects(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
			problems = append(problems, fmt.Sprintf("Deployment %s: selector does not match its pod template's labels", d.Name))
		}
	}
	sc, p := simbenchContainer(&serve.Spec.Template.Spec, where, image)
	problems = append(problems, p...)
	servePort := int32(-1)
	if sc != nil {
		if arg(sc.Args, 0) != "serve" {
			problems = append(problems, fmt.Sprintf("%s: runs %q, want serve", where, arg(sc.Args, 0)))
		}
		if !slices.Contains(sc.Args, "--allow-non-loopback") {
			problems = append(problems, where+": serve without --allow-non-loopback refuses an address other pods can reach")
		}
		addr, _ := flagValue(sc.Args, "--addr")
		host, port, ok := strings.Cut(addr, ":")
		pn, err := strconv.Atoi(port)
		if !ok || err != nil || host != "0.0.0.0" {
			problems = append(problems, fmt.Sprintf("%s: --addr %q, want 0.0.0.0:PORT", where, addr))
		} else {
			servePort = int32(pn)
			if !slices.ContainsFunc(sc.Ports, func(p corev1.ContainerPort) bool { return p.ContainerPort == servePort }) {
				problems = append(problems, fmt.Sprintf("%s: --addr port %d is not one of the container's ports", where, pn))
			}
		}
	}
	problems = append(problems, m.checkService(serveName, servePort)...)
	problems = append(problems, m.checkService(redisName, -1)...)

	p, n, out, wc := m.checkIndexed(w, image, "worker", "--member")
	problems = append(problems, p...)
	dirs, p, mc := m.checkMerge(merge, image, "report", "--merge")
	problems = append(problems, p...)
	if wc == nil || mc == nil || sc == nil {
		return problems
	}
	if a, b := arg(wc.Args, 1), arg(sc.Args, 1); a != b {
		problems = append(problems, fmt.Sprintf("Job %s runs %q but %s serves %q", workers, a, where, b))
	}
	problems = append(problems, m.checkURL(workers, wc.Args, "--base-url", "http", serveName)...)
	problems = append(problems, m.checkURL(workers, wc.Args, "--redis", "redis", redisName)...)
	return append(problems, sameDirs("Job "+fleetMerge, dirs, out, n)...)
}

// checkService checks that Service name selects exactly the pods of the
// Deployment of the same name and that each of its ports reaches a port of
// that Deployment's container (containerPort, when not -1, must be one).
func (m *manifests) checkService(name string, containerPort int32) []string {
	svc, d := m.services[name], m.deployments[name]
	where := "Service " + name
	if svc == nil {
		return []string{where + ": missing"}
	}
	var problems []string
	for dn, other := range m.deployments {
		if got := len(svc.Spec.Selector) > 0 && selects(svc.Spec.Selector, other.Spec.Template.Labels); got != (dn == name) {
			problems = append(problems, fmt.Sprintf("%s: its selector %v matches Deployment %s: %v, want %v", where, svc.Spec.Selector, dn, got, dn == name))
		}
	}
	if len(svc.Spec.Ports) == 0 || len(d.Spec.Template.Spec.Containers) != 1 {
		return append(problems, where+": want one port or more, onto a Deployment of one container")
	}
	c := d.Spec.Template.Spec.Containers[0]
	reached := false
	for _, sp := range svc.Spec.Ports {
		cp := targetPort(sp, c)
		if cp < 0 {
			problems = append(problems, fmt.Sprintf("%s: port %d targets %s, which is not a port of Deployment %s", where, sp.Port, sp.TargetPort.String(), name))
		}
		reached = reached || cp == containerPort
	}
	if containerPort >= 0 && !reached {
		problems = append(problems, fmt.Sprintf("%s: no port targets %d, where the container listens", where, containerPort))
	}
	return problems
}

// targetPort returns the container port sp reaches (-1: none of c's).
func targetPort(sp corev1.ServicePort, c corev1.Container) int32 {
	for _, p := range c.Ports {
		switch {
		case sp.TargetPort.Type == intstr.String && sp.TargetPort.StrVal == p.Name && p.Name != "",
			sp.TargetPort.Type == intstr.Int && sp.TargetPort.IntVal == p.ContainerPort,
			sp.TargetPort.Type == intstr.Int && sp.TargetPort.IntVal == 0 && sp.Port == p.ContainerPort:
			return p.ContainerPort
		}
	}
	return -1
}

// checkURL checks that flag's value in a Job's args is scheme://SERVICE:PORT
// with PORT a port of the Service named want.
func (m *manifests) checkURL(job string, args []string, flag, scheme, want string) []string {
	v, _ := flagValue(args, flag)
	where := fmt.Sprintf("Job %s: %s %q", job, flag, v)
	u, err := url.Parse(v)
	if err != nil || u.Scheme != scheme {
		return []string{fmt.Sprintf("%s: want %s://%s:PORT", where, scheme, want)}
	}
	// The short name resolves in the Job's namespace; the long forms too.
	host := u.Hostname()
	rest, ok := strings.CutPrefix(host, want)
	if !ok || rest != "" && !regexp.MustCompile(`^\.[a-z0-9-]+\.svc(\.cluster\.local)?$`).MatchString(rest) {
		return []string{fmt.Sprintf("%s: host %q is not the DNS name of Service %s", where, host, want)}
	}
	svc := m.services[want]
	if svc == nil {
		return nil // checkService says it is missing
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil || !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == int32(port) }) {
		return []string{fmt.Sprintf("%s: port %q is not a port of Service %s", where, u.Port(), want)}
	}
	return nil
}

// checkIndexed checks an Indexed Job whose one simbench container runs
// command with flag $(JOB_COMPLETION_INDEX)/N, and returns the problems,
// N, the container's --out (with $(JOB_COMPLETION_INDEX) in it) and the
// container.
func (m *manifests) checkIndexed(job *batchv1.Job, image, command, flag string) (problems []string, n int, out string, c *corev1.Container) {
	where := "Job " + job.Name
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		problems = append(problems, where+": want completionMode: Indexed, which sets "+indexVar)
	}
	problems = append(problems, checkJobPod(job)...)
	c, p := simbenchContainer(&s.Template.Spec, where, image)
	problems = append(problems, p...)
	if c == nil {
		return problems, 0, "", nil
	}
	if arg(c.Args, 0) != command {
		problems = append(problems, fmt.Sprintf("%s: runs %q, want %s", where, arg(c.Args, 0), command))
	}
	v, _ := flagValue(c.Args, flag)
	i, ns, ok := strings.Cut(v, "/")
	n, err := strconv.Atoi(ns)
	if !ok || err != nil || n < 1 || i != indexRef {
		problems = append(problems, fmt.Sprintf("%s: %s %q, want %s/N", where, flag, v, indexRef))
		return problems, 0, "", c
	}
	for field, got := range map[string]*int32{"completions": s.Completions, "parallelism": s.Parallelism} {
		if got == nil || int(*got) != n {
			problems = append(problems, fmt.Sprintf("%s: %s %s, want %d, the N of %s %s", where, field, ptrString(got), n, flag, v))
		}
	}
	out, _ = flagValue(c.Args, "--out")
	if !strings.Contains(out, indexRef) {
		problems = append(problems, fmt.Sprintf("%s: --out %q does not hold %s: the indexes would write one folder", where, out, indexRef))
	}
	return append(problems, m.onSharedVolume(where, c, &s.Template.Spec, out)...), n, out, c
}

// checkMerge checks a Job that runs command with flag DIR... and --out on
// the shared volume, and returns the DIRs.
func (m *manifests) checkMerge(job *batchv1.Job, image, command, flag string) ([]string, []string, *corev1.Container) {
	where := "Job " + job.Name
	problems := checkJobPod(job)
	if job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion {
		problems = append(problems, where+": a merge is one pod, not Indexed")
	}
	c, p := simbenchContainer(&job.Spec.Template.Spec, where, image)
	problems = append(problems, p...)
	if c == nil {
		return nil, problems, nil
	}
	if arg(c.Args, 0) != command {
		problems = append(problems, fmt.Sprintf("%s: runs %q, want %s", where, arg(c.Args, 0), command))
	}
	dirs := flagValues(c.Args, flag)
	out, _ := flagValue(c.Args, "--out")
	for _, d := range append(slices.Clone(dirs), out) {
		problems = append(problems, m.onSharedVolume(where, c, &job.Spec.Template.Spec, d)...)
	}
	return dirs, problems, c
}

// checkJobPod checks what every Job's pods rely on: restartPolicy Never (a
// failed pod is replaced, counted against the backoff limits, never
// restarted in place) and a backoffLimitPerIndex only where Kubernetes
// accepts one; and that each $(VAR) in the container's args names a
// variable it has (JOB_COMPLETION_INDEX when Indexed).
func checkJobPod(job *batchv1.Job) []string {
	where := "Job " + job.Name
	var problems []string
	spec := job.Spec.Template.Spec
	if spec.RestartPolicy != corev1.RestartPolicyNever {
		problems = append(problems, fmt.Sprintf("%s: restartPolicy %q, want Never", where, spec.RestartPolicy))
	}
	indexed := job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion
	if job.Spec.BackoffLimitPerIndex != nil && !indexed {
		problems = append(problems, where+": backoffLimitPerIndex needs completionMode: Indexed")
	}
	for _, c := range spec.Containers {
		vars := map[string]bool{indexVar: indexed}
		for _, e := range c.Env {
			vars[e.Name] = true
			if e.Name == indexVar && (!indexed || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != indexAnnotation) {
				problems = append(problems, fmt.Sprintf("%s: env %s must come from %s of an Indexed Job", where, indexVar, indexAnnotation))
			}
		}
		for _, a := range c.Args {
			for _, ref := range regexp.MustCompile(`\$\(([^)]*)\)`).FindAllStringSubmatch(a, -1) {
				if !vars[ref[1]] {
					problems = append(problems, fmt.Sprintf("%s: %q refers to $(%s), which the container does not have: Kubernetes would pass it unexpanded", where, a, ref[1]))
				}
			}
		}
	}
	return problems
}

// simbenchContainer returns a pod's one container, checked to run the
// image with command simbench.
func simbenchContainer(spec *corev1.PodSpec, where, image string) (*corev1.Container, []string) {
	if len(spec.Containers) != 1 {
		return nil, []string{fmt.Sprintf("%s: %d containers, want 1", where, len(spec.Containers))}
	}
	c := &spec.Containers[0]
	var problems []string
	if c.Image != image {
		problems = append(problems, fmt.Sprintf("%s: image %q, want %q, the one docs/fleets-and-sweeps.md builds", where, c.Image, image))
	}
	if !slices.Equal(c.Command, []string{"simbench"}) {
		problems = append(problems, fmt.Sprintf("%s: command %q, want [simbench]", where, c.Command))
	}
	return c, problems
}

// onSharedVolume checks that dir lies under a mount of c whose volume is
// a claim defined in the manifests.
func (m *manifests) onSharedVolume(where string, c *corev1.Container, spec *corev1.PodSpec, dir string) []string {
	for _, vm := range c.VolumeMounts {
		if dir != vm.MountPath && !strings.HasPrefix(dir, strings.TrimSuffix(vm.MountPath, "/")+"/") {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == vm.Name && v.PersistentVolumeClaim != nil && m.claims[v.PersistentVolumeClaim.ClaimName] != nil {
				return nil
			}
		}
	}
	return []string{fmt.Sprintf("%s: %q is not on a mounted PersistentVolumeClaim of deploy/: the other Jobs would not see it", where, dir)}
}

// sameDirs checks that a merge reads exactly the folders out names for the
// indexes 0 to n-1, in order.
func sameDirs(where string, dirs []string, out string, n int) []string {
	var want []string
	for i := range n {
		want = append(want, expand(out, indexRef, i))
	}
	if !slices.Equal(dirs, want) {
		return []string{fmt.Sprintf("%s: merges %q, want the %d folders the indexes write, %q", where, dirs, n, want)}
	}
	return nil
}

// expand replaces ref in s with index i.
func expand(s, ref string, i int) string { return strings.ReplaceAll(s, ref, strconv.Itoa(i)) }

// selects says whether every label of sel is in labels.
func selects(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// arg returns args[i], or "" past the end.
func arg(args []string, i int) string {
	if i < len(args) {
		return args[i]
	}
	return ""
}

// flagValue returns the value of flag in args (--flag V or --flag=V).
func flagValue(args []string, flag string) (string, bool) {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1], true
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v, true
		}
	}
	return "", false
}

// flagValues returns the words after flag up to the next flag.
func flagValues(args []string, flag string) []string {
	i := slices.Index(args, flag)
	if i < 0 {
		return nil
	}
	var vs []string
	for _, a := range args[i+1:] {
		if strings.HasPrefix(a, "-") {
			break
		}
		vs = append(vs, a)
	}
	return vs
}

// ptrString prints an optional count.
func ptrString(p *int32) string {
	if p == nil {
		return "unset"
	}
	return strconv.Itoa(int(*p))
}

// The shipped files agree with each other and with docs/fleets-and-sweeps.md.
func TestManifests(t *testing.T) {
	for _, p := range checkAll(readFiles(t)) {
		t.Error(p)
	}
}

// Every way the checks know to break a file is caught: each row changes
// one thing in one file (the text replaced must occur exactly once) and
// names a word the problem it causes must contain.
func TestBrokenCopiesFail(t *testing.T) {
	tests := []struct {
		file, old, new, want string
	}{
		{"deploy/fleet/serve.yaml", ", --allow-non-loopback]", "]", "--allow-non-loopback"},
		{"deploy/fleet/serve.yaml", `"0.0.0.0:8080"`, `"127.0.0.1:8080"`, "want 0.0.0.0:PORT"},
		{"deploy/fleet/serve.yaml", `"0.0.0.0:8080"`, `"0.0.0.0:9090"`, "not one of the container's ports"},
		{"deploy/fleet/serve.yaml", "      targetPort: http", "      targetPort: 9090", "not a port of Deployment"},
		{"deploy/fleet/serve.yaml", "      port: 8080", "      port: 80", "port \"8080\" is not a port of Service simbench-serve"},
		{"deploy/fleet/serve.yaml", "replicas: 1", "replicas: 2", "replicas: 1"},
		{"deploy/fleet/serve.yaml", "  selector:\n    app.kubernetes.io/name: simbench\n    app.kubernetes.io/component: serve", "  selector:\n    app.kubernetes.io/name: simbench", "matches Deployment"},
		{"deploy/fleet/serve.yaml", "args: [serve, shared-key,", "args: [serve, tier3,", "serves \"tier3\""},
		{"deploy/fleet/redis.yaml", "      targetPort: redis", "      targetPort: redis-port", "not a port of Deployment"},
		{"deploy/fleet/workers.yaml", "http://simbench-serve:8080", "http://simbench-serve:9090", "not a port of Service simbench-serve"},
		{"deploy/fleet/workers.yaml", "http://simbench-serve:8080", "http://serve:8080", "not the DNS name of Service simbench-serve"},
		{"deploy/fleet/workers.yaml", "http://simbench-serve:8080", "https://simbench-serve:8080", "want http://"},
		{"deploy/fleet/workers.yaml", "redis://simbench-redis:6379", "redis://simbench-redis:6380", "not a port of Service simbench-redis"},
		{"deploy/fleet/workers.yaml", "redis://simbench-redis:6379", "redis://simbench-serve:6379", "not the DNS name of Service simbench-redis"},
		{"deploy/fleet/workers.yaml", "  parallelism: 3", "  parallelism: 1", "parallelism 1, want 3"},
		{"deploy/fleet/workers.yaml", "            - worker\n", "            - run\n", "runs \"run\", want worker"},
		{"deploy/fleet/merge.yaml", "            - /results/fleet/member-0\n", "", "want the 3 folders"},
		{"deploy/fleet/merge.yaml", "/results/fleet/merged", "merged", "not on a mounted PersistentVolumeClaim"},
		{"deploy/sweep/workers.yaml", "  parallelism: 4", "  parallelism: 2", "completions 4 and parallelism 2"},
		{"deploy/sweep/workers.yaml", "  completionMode: Indexed", "  completionMode: NonIndexed", "completionMode: Indexed"},
		{"deploy/sweep/workers.yaml", "redis://simbench-redis:6379/1", "redis://simbench-redis:6380/1", "not a port of Service simbench-redis"},
		{"deploy/sweep/workers.yaml", "redis://simbench-redis:6379/1", "http://simbench-redis:6379/1", "want redis://"},
		{"deploy/sweep/workers.yaml", "            - sweep\n", "            - run\n", "runs \"run\", want sweep"},
		{"deploy/sweep/merge.yaml", "redis://simbench-redis:6379/1", "redis://simbench-redis:6379/2", "want the workers' store alone"},
		{"deploy/sweep/merge.yaml", "            - tier3\n", "            - multi-agent\n", "want one sweep"},
		{"deploy/sweep/merge.yaml", "/results/sweep/merged", "/tmp/merged", "not on a mounted PersistentVolumeClaim"},
		{"deploy/sweep/merge.yaml", "  backoffLimit: 0", "  completionMode: Indexed\n  completions: 1\n  backoffLimit: 0", "a merge is one pod"},
		{workflowFile, "      - run: go build -o simbench .\n", "", "simbench built 0 times"},
		{workflowFile, "for p in \"${pids[@]}\"; do wait \"$p\"; done", "wait", "a bare wait returns 0"},
		{workflowFile, "--out worker-$i > worker-$i.out &", "--out worker-$i > worker-$i.out", "want 2 or more at once"},
		{workflowFile, "for i in 0 1 2 3; do", "for i in 0; do", "1 workers"},
		{workflowFile, "--merge redis://localhost:6379/1", "--merge redis://localhost:6379/2", "want the workers' store"},
		{workflowFile, "redis://localhost:6379/1 --out worker", "redis://redis:6379/1 --out worker", "the service container"},
		{workflowFile, "          - 6379:6379\n", "", "publishing port 6379"},
		{workflowFile, "    timeout-minutes: 30\n", "", "timeout-minutes"},
		{workflowFile, "sweep tier3 --merge", "sweep multi-agent --merge", "want one sweep"},
		{workflowFile, "    runs-on: ubuntu-latest", "    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n        worker: [0, 1]", `field worker not found`},
		{"deploy/results-pvc.yaml", "kind: PersistentVolumeClaim", "kind: PersistentVolume", "kind \"PersistentVolume\""},
		{"deploy/Dockerfile", "FROM golang:1.26 AS build", "FROM golang:1.25 AS build", "stages"},
		{"deploy/Dockerfile", "COPY sched/go.mod sched/", "COPY sched/go.sum sched/", "COPY sched/go.sum: not in the repository"},
		{"deploy/Dockerfile", "/out/simbench /usr/local/bin/simbench", "/out/simbench /simbench", "/usr/local/bin/simbench"},
		{"docs/fleets-and-sweeps.md", "docker build -f deploy/Dockerfile --build-arg VERSION=$V -t simbench:$V .", "docker build -f deploy/Dockerfile --build-arg VERSION=$V -t simbench:latest .", "tags the image simbench:latest"},
		{"docs/fleets-and-sweeps.md", "docker build -f deploy/Dockerfile --build-arg VERSION=$V -t simbench:$V .", "docker build -f deploy/Dockerfile --build-arg VERSION=$V -t simbench2:$V .", `image "simbench:VERSION", want "simbench2:VERSION"`},
		{"docs/fleets-and-sweeps.md", "s|simbench:VERSION|simbench:$V|", "s|simbench:dev|simbench:$V|", "puts the version built into the manifests"},
		{"deploy/fleet/serve.yaml", "image: simbench:VERSION", "image: simbench:dev", `image "simbench:dev", want "simbench:VERSION"`},
		{"deploy/Dockerfile", `test -n "$VERSION"`, `true`, "the version its tag names"},
		{"deploy/fleet/serve.yaml", "allowPrivilegeEscalation: false", "allowPrivilegeEscalation: true", "Deployment/simbench-serve: refused by the restricted:latest Pod Security Standard: allowPrivilegeEscalation != false"},
		{"deploy/fleet/redis.yaml", "runAsUser: 999", "runAsUser: 0", "Deployment/simbench-redis: refused by the restricted:latest Pod Security Standard: runAsUser=0"},
		{"deploy/fleet/redis.yaml", "          emptyDir:\n            sizeLimit: 64Mi", "          hostPath:\n            path: /data", "restricted volume types"},
		{"deploy/fleet/workers.yaml", "type: RuntimeDefault", "type: Unconfined", "Job/simbench-workers: refused by the restricted:latest Pod Security Standard: seccompProfile"},
		{"deploy/fleet/merge.yaml", "runAsNonRoot: true", "runAsNonRoot: false", "runAsNonRoot != true"},
		{"deploy/fleet/merge.yaml", "  activeDeadlineSeconds: 600\n", "", "Job/simbench-fleet-merge: no activeDeadlineSeconds"},
		{"deploy/fleet/workers.yaml", "              memory: 512Mi\n", "", "container worker has no memory limit"},
		{"deploy/fleet/redis.yaml", "              cpu: 100m\n", "", "container redis requests no cpu"},
		{"deploy/fleet/serve.yaml", "              memory: 64Mi\n", "              memory: 1Gi\n", "requests memory 1Gi, above its limit 256Mi"},
		{"deploy/fleet/serve.yaml", "            sizeLimit: 64Mi\n", "            medium: Memory\n", "emptyDir tmp has no sizeLimit"},
	}
	base := readFiles(t)
	if problems := checkAll(base); len(problems) > 0 {
		t.Fatalf("the shipped files already fail: %q", problems)
	}
	for _, tt := range tests {
		t.Run(path.Base(tt.file)+": "+tt.new, func(t *testing.T) {
			if n := strings.Count(base[tt.file], tt.old); n != 1 {
				t.Fatalf("%s holds %q %d times, want once", tt.file, tt.old, n)
			}
			files := maps.Clone(base)
			files[tt.file] = strings.Replace(base[tt.file], tt.old, tt.new, 1)
			problems := checkAll(files)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tt.want) }) {
				t.Errorf("no problem says %q; got %q", tt.want, problems)
			}
		})
	}
}
