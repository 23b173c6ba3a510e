#!/bin/sh
# Runs a sweep sharded over Kubernetes to completion, round by round.
#
# The decision's sweep is adaptive, so its runs are known only round by
# round (docs/fleets-and-sweeps.md, "A sweep in shards"). Each round this script applies a
# Job that plans the round (simbench sweep --plan over the shard folders of
# the rounds before; its log's last line is how many runs are needed), and
# when that is not 0, an Indexed Job of SHARDS pods: pod I runs
# --shard $(JOB_COMPLETION_INDEX)/SHARDS over the same folders and writes
# /results/sweep/rROUND/shard-I. When a plan is empty, a last Job merges
# every round's folders into /results/sweep/merged. It waits for each Job
# to complete before the next is applied, and stops at the first that
# fails. All of them share the claim simbench-results (results-pvc.yaml).
#
# Usage: deploy/sweep/rounds.sh [SCENARIO [SWEEP-FLAG...]]
#   SCENARIO (tier3) and the flags (e.g. --duration 2m --seeds 5) are given
#   to every Job alike. Environment: SHARDS (4), the pods of a round;
#   ROUNDS (20), the most rounds before giving up; IMAGE (simbench:dev);
#   POLL (10), seconds between looks at a running Job.
# Before a second sweep: kubectl delete jobs -l app.kubernetes.io/part-of=simbench-sweep,
# and start from an empty /results/sweep.
set -eu

scenario=${1:-tier3}
if [ $# -gt 0 ]; then shift; fi
shards=${SHARDS:-4}
rounds=${ROUNDS:-20}
image=${IMAGE:-simbench:dev}
poll=${POLL:-10}
root=/results/sweep
index='$(JOB_COMPLETION_INDEX)'

for a in "$scenario" "$@"; do
	case $a in
	*[\"\\]*)
		echo "rounds.sh: $a: an argument with a quote or backslash is not passed on" >&2
		exit 2
		;;
	esac
done

# job NAME COMPONENT N ARG... prints a Job of one simbench container with
# the args given: Indexed with N pods at once when N > 0, else one pod.
job() {
	name=$1 component=$2 n=$3
	shift 3
	cat <<EOF
apiVersion: batch/v1
kind: Job
metadata:
  name: $name
  labels:
    app.kubernetes.io/name: simbench
    app.kubernetes.io/part-of: simbench-sweep
    app.kubernetes.io/component: $component
spec:
EOF
	if [ "$n" -gt 0 ]; then
		cat <<EOF
  completionMode: Indexed
  completions: $n
  parallelism: $n
  # A shard is deterministic: a pod lost with its node is run again, for
  # that index alone, up to twice.
  backoffLimitPerIndex: 2
EOF
	else
		cat <<EOF
  # Planning and merging are deterministic: a second try would fail alike.
  backoffLimit: 0
EOF
	fi
	cat <<EOF
  template:
    metadata:
      labels:
        app.kubernetes.io/name: simbench
        app.kubernetes.io/part-of: simbench-sweep
        app.kubernetes.io/component: $component
    spec:
      restartPolicy: Never
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        fsGroup: 65532
      containers:
        - name: sweep
          image: $image
          imagePullPolicy: IfNotPresent
          command: [simbench]
          args:
EOF
	for a in "$@"; do
		printf '            - "%s"\n' "$a"
	done
	if [ "$n" -gt 0 ]; then
		cat <<EOF
          env:
            # The Job controller sets this variable too; declared here, the
            # \$(JOB_COMPLETION_INDEX) in args expands whatever the version.
            - name: JOB_COMPLETION_INDEX
              valueFrom:
                fieldRef:
                  fieldPath: metadata.annotations['batch.kubernetes.io/job-completion-index']
EOF
	fi
	cat <<EOF
          resources:
            requests:
              cpu: "1"
              memory: 512Mi
          volumeMounts:
            - name: results
              mountPath: /results
      volumes:
        - name: results
          persistentVolumeClaim:
            claimName: simbench-results
EOF
}

# wait_job NAME waits until Job NAME is Complete; Failed is an error.
wait_job() {
	while :; do
		state=$(kubectl get "job/$1" -o 'jsonpath={.status.conditions[?(@.status=="True")].type}')
		case " $state " in
		*" Complete "*) return 0 ;;
		*" Failed "*)
			echo "rounds.sh: Job $1 failed (kubectl describe job/$1; kubectl logs job/$1)" >&2
			return 1
			;;
		esac
		sleep "$poll"
	done
}

dirs="" # the shard folders of the rounds so far
r=1
while :; do
	if [ "$r" -gt "$rounds" ]; then
		echo "rounds.sh: the sweep is not complete after $rounds rounds (ROUNDS=$rounds)" >&2
		exit 1
	fi
	plan=simbench-sweep-r$r-plan
	# shellcheck disable=SC2086 # $dirs is a list of folders without spaces
	job "$plan" sweep-plan 0 sweep "$scenario" "$@" --plan $dirs --out "$root/r$r/plan" | kubectl apply -f -
	wait_job "$plan"
	runs=$(kubectl logs "job/$plan" | tail -n 1)
	case $runs in
	'' | *[!0-9]*)
		echo "rounds.sh: Job $plan printed \"$runs\", not how many runs the round needs" >&2
		exit 1
		;;
	esac
	echo "round $r: $runs runs"
	if [ "$runs" -eq 0 ]; then
		break
	fi
	shard=simbench-sweep-r$r-shards
	# shellcheck disable=SC2086
	job "$shard" sweep-shard "$shards" sweep "$scenario" "$@" --shard "$index/$shards" $dirs --out "$root/r$r/shard-$index" | kubectl apply -f -
	wait_job "$shard"
	i=0
	while [ "$i" -lt "$shards" ]; do
		dirs="$dirs $root/r$r/shard-$i"
		i=$((i + 1))
	done
	r=$((r + 1))
done
# shellcheck disable=SC2086
job simbench-sweep-merge sweep-merge 0 sweep "$scenario" "$@" --merge $dirs --out "$root/merged" | kubectl apply -f -
wait_job simbench-sweep-merge
kubectl logs job/simbench-sweep-merge
