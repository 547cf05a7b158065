#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for testing `regsim sweep --slurm`:
#
#   scripts/local-slurm.sh         install, configure and start; exit 0 once the node is idle
#   scripts/local-slurm.sh stop    stop the daemons this script started, and wait for them
#
# Installs Debian's slurm-wlm and munge with apt-get if they are missing (needs root),
# writes a one-node /etc/slurm/slurm.conf for this host (its CPUs and memory as
# `slurmd -C` reports them; no accounting, no cgroups), and starts munged, slurmctld and
# slurmd. Idempotent: daemons already answering are left alone, and a slurm.conf this
# script did not write is never replaced. Exit status 3 (with the reason on stderr) means
# Slurm cannot run here: not root, no package, or a daemon that does not come up.
#
# Each daemon it starts is listed (by its pid file) in $LOCAL_SLURM_STARTED (default
# /run/regsim-local-slurm.started); `stop` stops exactly those, so daemons that were
# already running before are left running. scripts/test.sh points the variable at a file
# of its own and stops what it started when it exits.
set -euo pipefail

conf_dir=/etc/slurm
conf=$conf_dir/slurm.conf
marker="# Written by regsim scripts/local-slurm.sh"
log_dir=/var/log/slurm
ctld_pid=/run/slurmctld.pid
slurmd_pid=/run/slurmd.pid
munge_pid=/run/munge/munged.pid
started=${LOCAL_SLURM_STARTED:-/run/regsim-local-slurm.started}

cannot() { echo "local-slurm: cannot start Slurm here: $*" >&2; exit 3; }
say() { echo "local-slurm: $*" >&2; }

# Stops the daemon of a pid file and waits (up to 10 s) until it has exited.
stop_pidfile() {
    local file=$1
    [ -f "$file" ] || return 0
    local pid
    pid=$(cat "$file")
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill "$pid" || return 0
        for _ in $(seq 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            say "pid $pid ($file) still running 10 s after SIGTERM"
        else
            say "stopped pid $pid ($file)"
        fi
    fi
}

# Notes that this script started the daemon of pid file $1.
record_start() { echo "$1" >>"$started"; }

if [ "${1:-}" = stop ]; then
    if [ ! -s "$started" ]; then
        say "no daemon started by this script is listed in $started; nothing to stop"
        exit 0
    fi
    # The last started first: slurmd, slurmctld, then munged.
    tac "$started" | while read -r file; do stop_pidfile "$file"; done
    rm -f "$started"
    exit 0
fi

[ "$(id -u)" -eq 0 ] || cannot "needs root (apt-get, daemons in /run and /var/spool)"

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null \
    || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
    command -v apt-get >/dev/null || cannot "Slurm is not installed and there is no apt-get"
    say "installing slurm-wlm and munge"
    export DEBIAN_FRONTEND=noninteractive
    apt_get() { apt-get -q -o DPkg::Lock::Timeout=900 "$@"; }
    if ! apt_get install -y --no-install-recommends slurm-wlm munge >/dev/null; then
        apt_get update >/dev/null || true
        apt_get install -y --no-install-recommends slurm-wlm munge >/dev/null \
            || cannot "apt-get install slurm-wlm munge failed"
    fi
fi

# munge: the key the package made, else a fresh one.
if [ ! -s /etc/munge/munge.key ]; then
    if command -v mungekey >/dev/null; then
        mungekey --create --keyfile=/etc/munge/munge.key
    else
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    fi
fi
chown munge:munge /etc/munge/munge.key
chmod 400 /etc/munge/munge.key
mkdir -p /run/munge /var/lib/munge /var/log/munge
chown munge:munge /run/munge /var/lib/munge /var/log/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    say "starting munged"
    runuser -u munge -- /usr/sbin/munged --force || cannot "munged did not start"
    record_start "$munge_pid"
    for _ in $(seq 50); do
        munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
        sleep 0.1
    done
    munge -n | unmunge >/dev/null 2>&1 || cannot "munged does not answer"
fi

host=$(hostname -s)
if [ -f "$conf" ] && ! grep -qF "$marker" "$conf"; then
    cannot "$conf exists and was not written by this script; not replacing it"
fi
node=$(slurmd -C 2>/dev/null | grep '^NodeName=' | head -1) \
    || cannot "slurmd -C cannot describe this host"
[ -n "$node" ] || cannot "slurmd -C printed no NodeName line"
# Leave the host some memory: advertise 90% of it.
mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$node")
node=$(sed "s/RealMemory=[0-9]*/RealMemory=$((mem * 9 / 10))/; s/UpTime=.*//" <<<"$node")
mkdir -p "$conf_dir" "$log_dir" /var/spool/slurmctld /var/spool/slurmd
new_conf=$(cat <<EOF
$marker: a one-node cluster for tests.
ClusterName=regsim-local
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=$ctld_pid
SlurmdPidFile=$slurmd_pid
SlurmctldLogFile=$log_dir/slurmctld.log
SlurmdLogFile=$log_dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmctldTimeout=30
SlurmdTimeout=30
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=regsim Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
)
if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$new_conf" ]; then
    printf '%s\n' "$new_conf" >"$conf"
    say "wrote $conf ($(sed 's/ Boards.*//' <<<"$node"), ${mem} MB)"
fi

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
if ! running "$ctld_pid"; then
    say "starting slurmctld"
    slurmctld || cannot "slurmctld did not start (see $log_dir/slurmctld.log)"
    record_start "$ctld_pid"
fi
if ! running "$slurmd_pid"; then
    say "starting slurmd"
    slurmd || cannot "slurmd did not start (see $log_dir/slurmd.log)"
    record_start "$slurmd_pid"
fi

# Wait for the node to be usable.
state=
for _ in $(seq 60); do
    state=$(sinfo -h -n "$host" -o %T 2>/dev/null | head -1 || true)
    case $state in
        idle|mixed|allocated|completing) break ;;
        down*|drain*|fail*) scontrol update nodename="$host" state=resume 2>/dev/null || true ;;
    esac
    sleep 1
done
case $state in
    idle|mixed|allocated|completing) say "node $host is $state" ;;
    *) cannot "node $host is '${state:-unknown}' after 60 s (see $log_dir/slurmd.log, $log_dir/slurmctld.log)" ;;
esac
