// Package deploy holds no code: its directory is where simbench runs past
// one machine on an existing job engine, and its tests check that what it
// ships agrees with itself and with docs/fleets-and-sweeps.md. The Kubernetes manifests
// (fleet/: Redis, the fake provider and a fleet of workers as an Indexed
// Job, and the Job that merges the members; sweep/: the Indexed Job of
// sweep workers sharing that Redis, and the Job that writes the sweep from
// it; results-pvc.yaml: the volume the merges write to) are parsed
// strictly with the Kubernetes API types. Every pod template among them is
// evaluated with the API server's own pod security checks
// (k8s.io/pod-security-admission) at the restricted level, and every Job
// must have a deadline and a time to live, every container requests and
// limits. The Dockerfile of the image they run is checked, and the GitHub
// Actions workflow .github/workflows/sweep-work.yml is decoded with a YAML
// decoder that refuses unknown keys and its steps' simbench commands
// checked: the workers started at once on its Redis service container,
// each waited for, the merge of the same store after them.
//
// It is a module of its own so that the Kubernetes libraries its tests need
// stay out of the simbench module's dependencies. testdata/commands.jsonl
// lists every simbench command line the manifests and the workflow run; the
// simbench module's tests parse each with the command's own parser, so a
// renamed flag fails there.
package deploy
