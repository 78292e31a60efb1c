#!/usr/bin/env bash
# A real single-node Slurm (slurmctld and slurmd on this machine, munge for authentication) runs
# examples/slurm/sweep-array.sh as a job array and the merge as a job that depends on it; the
# merged file must equal the unsharded sweep byte for byte (cmp). Then one shard is cut short, as
# a preempted task leaves it, and rerun alone (--array=2, SHARDS=N): it resumes and the merge is
# again identical.
#
#   cargo build --release && tests/slurm/run.sh [N]      (N shards, default 3; about 30 s)
#
# Needs root and Debian's slurm-wlm (apt-get install slurm-wlm; Slurm 22.05 has no auth/slurm,
# so munge too). Exit 0: identical; 77: skipped (no Slurm, not root); anything else: failed
# (the work folder with the daemons' logs is kept). Not part of .ci/run: CI checks shards and
# merge with `cargo test --test sweep`.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
N=${1:-3}
BIN=${GPUTRAFFIC:-$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/gputraffic}

for tool in slurmctld slurmd sbatch squeue sinfo scontrol munged munge unmunge; do
    command -v "$tool" >/dev/null || { echo "skip: no $tool (apt-get install slurm-wlm)"; exit 77; }
done
[[ $(id -u) == 0 ]] || { echo "skip: needs root (slurmd runs the jobs as their users)"; exit 77; }
[[ -x $BIN ]] || { echo "error: no $BIN: cargo build --release" >&2; exit 1; }

WORK=$(mktemp -d /tmp/gputraffic-slurm.XXXXXX)
export SLURM_CONF=$WORK/slurm.conf
STARTED_MUNGE=
cleanup() {
    local rc=$?
    local pids=()
    for pid_file in "$WORK"/slurmd.pid "$WORK"/slurmctld.pid; do
        [[ -s $pid_file ]] && pids+=("$(cat "$pid_file")")
    done
    [[ -n $STARTED_MUNGE && -s /run/munge/munged.pid ]] && pids+=("$(cat /run/munge/munged.pid)")
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    # The daemons write their state as they stop: wait for them (at most 10 s).
    for _ in $(seq 100); do
        local alive=
        for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
        [[ -z $alive ]] && break
        sleep 0.1
    done
    if [[ $rc == 0 ]]; then rm -rf "$WORK"; else echo "failed (exit $rc): logs in $WORK" >&2; fi
}
trap cleanup EXIT

# munge: use the running daemon, or start one as the munge user.
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    mkdir -p /run/munge && chown munge:munge /run/munge && chmod 755 /run/munge
    runuser -u munge -- munged
    STARTED_MUNGE=1
    munge -n | unmunge >/dev/null
fi

HOST=$(hostname -s)
PORT=$((20000 + RANDOM % 20000))
mkdir -p "$WORK"/state "$WORK"/spool "$WORK"/log
cat >"$SLURM_CONF" <<CONF
ClusterName=gputraffic-test
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld
slurmd
for _ in $(seq 60); do
    [[ $(sinfo -h -N -o %t 2>/dev/null) == idle ]] && break
    sleep 0.5
done
[[ $(sinfo -h -N -o %t) == idle ]] || { echo "the node never became idle: $(sinfo -N)" >&2; exit 1; }
echo "slurm $(sinfo -V | cut -d' ' -f2): node $HOST idle, ports $PORT-$((PORT + 1))"

# Waits until job $1 has left the queue (at most two minutes) and checks every task completed.
wait_for() {
    for _ in $(seq 240); do
        [[ -z $(squeue -h -j "$1" 2>/dev/null) ]] && break
        sleep 0.5
    done
    [[ -z $(squeue -h -j "$1") ]] || { echo "job $1 still queued: $(squeue -j "$1")" >&2; exit 1; }
    local states
    states=$(scontrol -o show job "$1" | grep -o 'JobState=[A-Z_]* .*ExitCode=[0-9:]*' |
        sed 's/JobState=\([A-Z_]*\) .*ExitCode=\([0-9:]*\)/\1 \2/' | sort | uniq -c)
    echo "job $1: $states"
    if scontrol -o show job "$1" | grep -v 'JobState=COMPLETED' | grep -q .; then
        echo "job $1 did not complete:" >&2
        cat "$WORK"/task-*.out >&2 || true
        exit 1
    fi
}

SWEEP=(--kernel star1 --hw h200 --blocks 32x4x1,16x8x1 --domains 64x64x32,128x32x32,32x64x32
    --models su2015)
OUT=$WORK/runs/sweep.csv
mkdir -p "$WORK"/runs
export_vars=ALL,OUT=$OUT,GPUTRAFFIC=$BIN
jid=$(sbatch --parsable --array=1-"$N" --cpus-per-task=1 --chdir="$WORK" \
    --output="$WORK/task-%A_%a.out" --export="$export_vars" \
    "$ROOT/examples/slurm/sweep-array.sh" "${SWEEP[@]}")
merge_jid=$(sbatch --parsable --dependency=afterok:"$jid" --chdir="$WORK" \
    --output="$WORK/merge-%j.out" --export="$export_vars" \
    --wrap "$BIN merge --out $OUT $WORK/runs/sweep.shards/*-of-$N.csv")
echo "array job $jid (tasks 1-$N), merge job $merge_jid (afterok:$jid)"
wait_for "$jid"
wait_for "$merge_jid"
cat "$WORK"/task-*.out "$WORK"/merge-*.out

"$BIN" sweep "${SWEEP[@]}" --out "$WORK/unsharded.csv"
cmp "$OUT" "$WORK/unsharded.csv"
echo "cmp $OUT $WORK/unsharded.csv: identical ($(wc -l <"$OUT") lines, $(wc -c <"$OUT") bytes)"

# A preempted task: shard 2 loses its last row and is left with half a line; rerun task 2 alone.
shard=$WORK/runs/sweep.shards/2-of-$N.csv
head -n -1 "$shard" >"$WORK/cut" && tail -n 1 "$shard" | head -c 40 >>"$WORK/cut"
mv "$WORK/cut" "$shard"
rm "$OUT"
rerun=$(sbatch --parsable --array=2 --cpus-per-task=1 --chdir="$WORK" \
    --output="$WORK/rerun-%A_%a.out" --export="$export_vars,SHARDS=$N" \
    "$ROOT/examples/slurm/sweep-array.sh" "${SWEEP[@]}")
echo "rerun of task 2: job $rerun"
wait_for "$rerun"
cat "$WORK"/rerun-*.out
grep -q "1 simulated" "$WORK"/rerun-*.out
"$BIN" merge --out "$OUT" "$WORK"/runs/sweep.shards/*-of-"$N".csv
cmp "$OUT" "$WORK/unsharded.csv"
echo "after the rerun: cmp identical"
