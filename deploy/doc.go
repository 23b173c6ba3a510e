// Package deploy holds no code: its directory is where simbench runs past
// one machine on an existing job engine, and its tests check that what it
// ships agrees with itself and with docs/fleets-and-sweeps.md. The Kubernetes manifests
// (fleet/: Redis, the fake provider and a fleet of workers as an Indexed
// Job, and the Job that merges the members; results-pvc.yaml: the volume
// every Job shares) are parsed strictly with the Kubernetes API types, and
// so are the Jobs sweep/rounds.sh applies (per round a plan Job and an
// Indexed Job of shards, until the plan is empty, then the merge), driven
// through the tier3 sweep's rounds with a stand-in kubectl. Every pod
// template among them is evaluated with the API server's own pod security
// checks (k8s.io/pod-security-admission) at the restricted level, and
// every Job must have a deadline and a time to live, every container
// requests and limits. The Dockerfile
// of the image they run is checked, and the GitHub Actions workflows
// .github/workflows/sweep-shards.yml and sweep-round.yml are decoded with a
// YAML decoder that refuses unknown keys and run in a simulation of their
// jobs, artifacts and shell globs.
//
// It is a module of its own so that the Kubernetes libraries its tests need
// stay out of the simbench module's dependencies. testdata/commands.jsonl
// lists every simbench command line the manifests and the workflow run; the
// simbench module's tests parse each with the command's own parser, so a
// renamed flag fails there.
package deploy
