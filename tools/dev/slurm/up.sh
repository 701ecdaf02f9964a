#!/bin/sh
# A single-node Slurm cluster on this machine, for `make slurm-up` and the
# Slurm test (cmd/placer's TestSlurm; docs/cluster.md): Debian's
# slurm-wlm (slurmctld, slurmd, the client commands) and munge,
# installed with apt-get --no-install-recommends when missing; a minimal
# slurm.conf (one node, this host, SLURM_CPUS CPUs, no cgroups: containers
# usually lack them, so processes are tracked by /proc and tasks are not
# bound); a munge key; munged, slurmctld and slurmd started as root (or
# with sudo); then it waits for sinfo to show the node idle. Idempotent:
# daemons already up are left alone. Needs root or sudo.
set -eu

CPUS=${SLURM_CPUS:-2}
WAIT=${SLURM_WAIT:-60}
sudo=
if [ "$(id -u)" != 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "slurm-up: needs root or sudo to install and start the daemons" >&2
		exit 1
	fi
	sudo=sudo
fi

if ! command -v slurmctld >/dev/null 2>&1 || ! command -v slurmd >/dev/null 2>&1 ||
	! command -v sbatch >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
	echo "slurm-up: installing slurmctld slurmd slurm-client munge (apt-get --no-install-recommends; about a minute)"
	$sudo apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
fi
# SLURM_INSTALL_ONLY=1 (make slurm-deps, part of make deps): the packages
# only, no configuration and no daemons.
if [ "${SLURM_INSTALL_ONLY:-}" = 1 ]; then
	exit 0
fi

host=$(hostname -s)
conf=/etc/slurm/slurm.conf
want=$(mktemp)
cat >"$want" <<CONF
# Written by placer's tools/dev/slurm/up.sh: one node, this host.
ClusterName=placer
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
MaxArraySize=100001
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
if ! cmp -s "$want" "$conf" 2>/dev/null; then
	$sudo mkdir -p /etc/slurm
	$sudo cp "$want" "$conf"
	$sudo chmod 644 "$conf"
	restart=1
else
	restart=0
fi
rm -f "$want"
$sudo mkdir -p /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge

# munge: a key (Debian's package makes one; make it if absent), the daemon.
if [ ! -s /etc/munge/munge.key ]; then
	$sudo sh -c 'dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null'
fi
$sudo chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge 2>/dev/null || true
$sudo chmod 400 /etc/munge/munge.key
if ! pgrep -x munged >/dev/null; then
	$sudo -u munge /usr/sbin/munged 2>/dev/null || $sudo runuser -u munge -- /usr/sbin/munged
fi

if [ "$restart" = 1 ]; then
	for d in slurmctld slurmd; do
		if pid=$(pgrep -x $d); then $sudo kill $pid; sleep 1; fi
	done
fi
pgrep -x slurmctld >/dev/null || $sudo /usr/sbin/slurmctld
pgrep -x slurmd >/dev/null || $sudo /usr/sbin/slurmd

i=0
while :; do
	state=$(sinfo -h -N -o %t 2>/dev/null | head -n 1 || true)
	case $state in
	idle* | mix* | alloc*) break ;;
	drain* | down*) $sudo scontrol update nodename="$host" state=resume 2>/dev/null || true ;;
	esac
	i=$((i + 1))
	if [ "$i" -gt "$WAIT" ]; then
		echo "slurm-up: the node is not idle after ${WAIT} s (sinfo: '${state}'); logs in /var/log/slurm" >&2
		tail -n 5 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 2>/dev/null || true
		exit 1
	fi
	sleep 1
done
echo "slurm-up: node $host idle ($CPUS CPUs): $(sinfo -h -o '%P %a %D %t')"
