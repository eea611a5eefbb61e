#!/usr/bin/env bash
# A throw-away single-node Slurm cluster on localhost for tests: munged, slurmctld and slurmd
# (Debian's packages munge, slurmctld, slurmd, slurm-client) with their own key, sockets, state
# and a generated slurm.conf, all under one directory. Nothing under /etc is touched.
#
#   tools/slurm_local.sh start DIR   prints "export SLURM_CONF=DIR/slurm.conf" once the node is idle
#   tools/slurm_local.sh stop DIR    stops the daemons this script started (their pid files)
#
# Exit status 77 (the CTest skip code) when the packages are missing or the cluster does not come
# up, with the reason on stderr.
set -uo pipefail

skip() { echo "slurm_local: SKIP: $*" >&2; exit 77; }

action="${1:-}"
dir="${2:-}"
[ -n "$action" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

stop() {
  for name in slurmd slurmctld munged; do
    pidfile="$dir/run/$name.pid"
    [ -f "$pidfile" ] || continue
    pid="$(cat "$pidfile")"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$pidfile"
  done
}

if [ "$action" = stop ]; then stop; exit 0; fi
[ "$action" = start ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

for tool in munged slurmctld slurmd sbatch squeue scontrol; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] ||
    skip "'$tool' not found (install Debian's munge, slurmctld, slurmd and slurm-client)"
done
export PATH="$PATH:/usr/sbin"

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

mkdir -p "$dir"/{run,log,state,spool,munge}
chmod 700 "$dir/munge"
user="$(id -un)"
host="$(hostname -s)"
cpus="$(nproc)"
mem_mb="$(awk '/MemTotal/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)"

# munge: its own key and socket.
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1 count=1024 status=none
chmod 400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" \
  --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
  --seed-file="$dir/munge/munge.seed" >/dev/null 2>&1 ||
  skip "munged did not start: $(tail -n 3 "$dir/log/munged.log" 2>/dev/null | tr '\n' ' ')"

cat > "$dir/slurm.conf" <<EOF
ClusterName=kvstest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=300
SlurmdTimeout=60
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$dir/slurm.conf"

slurmctld -i >/dev/null 2>&1 || { stop; skip "slurmctld did not start: $(tail -n 3 "$dir/log/slurmctld.log" 2>/dev/null | tr '\n' ' ')"; }
slurmd >/dev/null 2>&1 || { stop; skip "slurmd did not start: $(tail -n 3 "$dir/log/slurmd.log" 2>/dev/null | tr '\n' ' ')"; }

for _ in $(seq 150); do
  state="$(sinfo -h -n "$host" -o %t 2>/dev/null | head -n 1)"
  case "$state" in idle*|mix*|alloc*) echo "export SLURM_CONF=$dir/slurm.conf"; exit 0 ;; esac
  sleep 0.2
done
reason="node state '${state:-none}' after 30 s; slurmctld: $(tail -n 2 "$dir/log/slurmctld.log" 2>/dev/null | tr '\n' ' ') slurmd: $(tail -n 2 "$dir/log/slurmd.log" 2>/dev/null | tr '\n' ' ')"
stop
skip "$reason"
