#!/usr/bin/env bash
# One task of a gputraffic sweep split over a Slurm job array: task K of the array 1-N runs
# shard K/N of the sweep whose arguments follow the script's name, into its own file; once
# every task has finished, `gputraffic merge` joins the N files into exactly the file the
# unsharded sweep would write. docs/cluster.md walks through it.
#
#   mkdir -p logs
#   jid=$(sbatch --parsable --array=1-8 examples/slurm/sweep-array.sh \
#           --kernel star4 --blocks all-1024 --domains 320x256x256 --l2-scale 0.125,0.25,0.5,1)
#   sbatch --dependency=afterok:$jid --output=logs/merge-%j.out \
#       --wrap 'gputraffic merge --out runs/sweep.csv runs/sweep.shards/*-of-8.csv'
#
# Every task runs with --resume: a task that was preempted or requeued continues where it
# stopped, and running a finished task again simulates nothing.
#
# Environment (export it before sbatch, or --export=ALL,NAME=VALUE):
#   OUT         the merged file the shards are for (default runs/sweep.csv; .jsonl for JSON
#               lines); shard K of N goes to runs/sweep.shards/K-of-N.csv
#   SHARDS      N: needed only when the array is not the whole 1-N, e.g. to rerun tasks 3 and 7
#               of 8: sbatch --array=3,7 --export=ALL,SHARDS=8 examples/slurm/sweep-array.sh …
#   GPUTRAFFIC  the binary (default: gputraffic on the PATH)
#
# Adjust the resources below to your cluster; --cpus-per-task becomes the sweep's --threads.
#SBATCH --job-name=gputraffic-sweep
#SBATCH --array=1-8
#SBATCH --cpus-per-task=16
#SBATCH --time=04:00:00
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --output=logs/sweep-%A_%a.out
set -euo pipefail

if [[ -z "${SLURM_ARRAY_TASK_ID:-}" ]]; then
    echo "error: run this as a job array: sbatch --array=1-N $0 SWEEP-ARGUMENTS…" >&2
    exit 2
fi
K=$SLURM_ARRAY_TASK_ID
if [[ -n "${SHARDS:-}" ]]; then
    N=$SHARDS
elif [[ "${SLURM_ARRAY_TASK_MIN:-}" == 1 && "${SLURM_ARRAY_TASK_COUNT:-}" == "${SLURM_ARRAY_TASK_MAX:-}" ]]; then
    # The whole array 1-N (throttling with %M is fine): N is its last task.
    N=$SLURM_ARRAY_TASK_MAX
else
    echo "error: the array is not 1-N (tasks ${SLURM_ARRAY_TASK_MIN:-?}-${SLURM_ARRAY_TASK_MAX:-?}," \
        "${SLURM_ARRAY_TASK_COUNT:-?} of them): say how many shards the sweep has, SHARDS=N" >&2
    exit 2
fi

OUT=${OUT:-runs/sweep.csv}
case $OUT in
    *.jsonl) EXT=jsonl STEM=${OUT%.jsonl} ;;
    *.csv) EXT=csv STEM=${OUT%.csv} ;;
    *) EXT=csv STEM=$OUT ;;
esac
SHARD_FILE=$STEM.shards/$K-of-$N.$EXT

echo "$(date -Is) $(hostname): shard $K/$N of the sweep ($*) into $SHARD_FILE" \
    "(job ${SLURM_ARRAY_JOB_ID:-?}, restart ${SLURM_RESTART_COUNT:-0})"
exec "${GPUTRAFFIC:-gputraffic}" sweep "$@" --shard "$K/$N" --out "$SHARD_FILE" --resume \
    ${SLURM_CPUS_PER_TASK:+--threads "$SLURM_CPUS_PER_TASK"}
