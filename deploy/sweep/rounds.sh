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
# Usage: IMAGE=simbench:V deploy/sweep/rounds.sh [SCENARIO [SWEEP-FLAG...]]
#   SCENARIO (tier3) and the flags (e.g. --duration 2m --seeds 5) are given
#   to every Job alike. Environment: IMAGE (required), the image built with
#   --build-arg VERSION=V and tagged V (docs/fleets-and-sweeps.md), V being
#   the version the runs are keyed by; SHARDS (4), the pods of a round;
#   ROUNDS (20), the most rounds before giving up; DEADLINE (1800), the
#   seconds a Job may run (its activeDeadlineSeconds: past it Kubernetes
#   stops the Job, which ends Failed); START (300), the seconds a Job's
#   first pod may take to start (be scheduled and pull the image); POLL
#   (10), seconds between looks at a Job.
# Before a second sweep: kubectl delete jobs -l app.kubernetes.io/part-of=simbench-sweep,
# and start from an empty /results/sweep.
set -eu

scenario=${1:-tier3}
if [ $# -gt 0 ]; then shift; fi
shards=${SHARDS:-4}
rounds=${ROUNDS:-20}
image=${IMAGE:-}
deadline=${DEADLINE:-1800}
start=${START:-300}
poll=${POLL:-10}
root=/results/sweep
index='$(JOB_COMPLETION_INDEX)'

case $image in
'')
	echo "rounds.sh: set IMAGE to the image built for this version, e.g. IMAGE=simbench:\$V (docs/fleets-and-sweeps.md, \"On a job engine\")" >&2
	exit 2
	;;
*:VERSION | *:latest | *:dev)
	echo "rounds.sh: IMAGE=$image: name the image by the version it was built with (--build-arg VERSION=V, tag V), not a tag that moves" >&2
	exit 2
	;;
esac
for n in "$shards" "$rounds" "$deadline" "$start" "$poll"; do
	case $n in
	'' | *[!0-9]*)
		echo "rounds.sh: \"$n\": SHARDS, ROUNDS, DEADLINE, START and POLL take a whole number" >&2
		exit 2
		;;
	esac
done

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
  # Stopped (Failed, DeadlineExceeded) past DEADLINE seconds; kept a day
  # after it ends for its logs, then deleted with its pods.
  activeDeadlineSeconds: $deadline
  ttlSecondsAfterFinished: 86400
EOF
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
        runAsGroup: 65532
        fsGroup: 65532
        seccompProfile:
          type: RuntimeDefault
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
	cat <<EOF
          env:
            # The run cache, on the pod's own scratch volume: the root
            # filesystem is read-only.
            - name: SIMBENCH_CACHE
              value: /tmp/cache
EOF
	if [ "$n" -gt 0 ]; then
		cat <<EOF
            # The Job controller sets this variable too; declared here, the
            # \$(JOB_COMPLETION_INDEX) in args expands whatever the version.
            - name: JOB_COMPLETION_INDEX
              valueFrom:
                fieldRef:
                  fieldPath: metadata.annotations['batch.kubernetes.io/job-completion-index']
EOF
	fi
	cat <<EOF
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop: [ALL]
          # Measured (/usr/bin/time -v): the whole tier3 sweep in one
          # process at --parallel 1 peaked at 78 MB resident and took 6.0 s
          # of CPU; a round's plan 25 MB and 0.07 s, a shard 40 MB and
          # 0.31 s. The limits leave room for longer --duration and more
          # --seeds; runs simulated at once default to GOMAXPROCS, which Go
          # sets from the CPU limit: 2.
          resources:
            requests:
              cpu: "1"
              memory: 256Mi
            limits:
              cpu: "2"
              memory: 1Gi
          volumeMounts:
            - name: results
              mountPath: /results
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: results
          persistentVolumeClaim:
            claimName: simbench-results
        # The run cache of the whole tier3 sweep takes 5 MB.
        - name: tmp
          emptyDir:
            sizeLimit: 256Mi
EOF
}

# wait_job NAME waits until Job NAME is Complete. Failed is an error, and
# so are a Job no pod of which has started after START seconds, and a Job
# not finished a minute past DEADLINE seconds (Kubernetes should have
# stopped it by then).
wait_job() {
	t0=$(date +%s)
	started=""
	while :; do
		state=$(kubectl get "job/$1" -o 'jsonpath={.status.conditions[?(@.status=="True")].type}')
		case " $state " in
		*" Complete "*) return 0 ;;
		*" Failed "*)
			echo "rounds.sh: Job $1 failed (kubectl describe job/$1; kubectl logs job/$1)" >&2
			return 1
			;;
		esac
		waited=$(($(date +%s) - t0))
		if [ -z "$started" ]; then
			phases=$(kubectl get pods -l "job-name=$1" -o 'jsonpath={.items[*].status.phase}')
			case " $phases " in
			*" Running "* | *" Succeeded "* | *" Failed "*) started=yes ;;
			*)
				if [ "$waited" -ge "$start" ]; then
					echo "rounds.sh: no pod of Job $1 has started after $waited s (START=$start; pods: ${phases:-none}): see kubectl describe pods -l job-name=$1 (an image that cannot be pulled? no node with room? the claim not bound?)" >&2
					return 1
				fi
				;;
			esac
		fi
		if [ "$waited" -gt $((deadline + 60)) ]; then
			echo "rounds.sh: Job $1 has not finished $waited s after it was applied (DEADLINE=$deadline): see kubectl describe job/$1" >&2
			return 1
		fi
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
