// Package deploy holds no code: its directory is where simbench runs past
// one machine on an existing job engine, and its tests check that what it
// ships agrees with itself and with the README. The Kubernetes manifests
// (sweep/: a sweep in shards as an Indexed Job and the Job that merges them;
// fleet/: Redis, the fake provider and a fleet of workers as an Indexed Job,
// and the Job that merges the members; results-pvc.yaml: the volume they
// share), the Dockerfile of the image they run, and the GitHub Actions
// workflow .github/workflows/sweep-shards.yml are parsed strictly with the
// Kubernetes API types and a YAML decoder that refuses unknown keys.
//
// It is a module of its own so that the Kubernetes libraries its tests need
// stay out of the simbench module's dependencies. testdata/commands.jsonl
// lists every simbench command line the manifests and the workflow run; the
// simbench module's tests parse each with the command's own parser, so a
// renamed flag fails there.
package deploy
