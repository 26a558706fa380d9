#!/usr/bin/env bash
# An OCI runtime for Docker: runc, after taking out of the container's configuration (and of an
# exec'd process's) every capability that this runtime's own bounding set lacks. Docker 20.10 gives a privileged
# container every capability the kernel knows; where the engine itself runs without one (this
# machine's has no CAP_SYS_RESOURCE), runc cannot grant it and refuses to start the container
# ("unable to apply caps: operation not permitted"). kind's nodes are privileged containers;
# scripts/k8s-local.sh registers this file as the Docker runtime "kind-runc" and runs them with it.
# Usage (by the container shim, as for runc): kind-runc.sh [runc arguments...]
set -euo pipefail

# create and run name the bundle, whose config.json holds .process.capabilities; exec names a
# process file, which holds .capabilities.
file="" filter="" previous=""
for argument in "$@"; do
  case "$previous" in
    --bundle | -b) file="$argument/config.json" filter=.process.capabilities ;;
    --process | -p) file="$argument" filter=.capabilities ;;
  esac
  case "$argument" in
    --bundle=*) file="${argument#--bundle=}/config.json" filter=.process.capabilities ;;
    --process=*) file="${argument#--process=}" filter=.capabilities ;;
  esac
  previous="$argument"
done

if [[ -n "$file" && -f "$file" ]]; then
  # capability(7) numbers 0..40, as the kernel's linux/capability.h numbers them
  names=(CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP LINUX_IMMUTABLE
    NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT
    SYS_PTRACE SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE
    AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE MAC_ADMIN SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ
    PERFMON BPF CHECKPOINT_RESTORE)
  bounding=$((16#$(awk '$1 == "CapBnd:" { print $2 }' /proc/self/status)))
  missing=()
  for number in "${!names[@]}"; do
    (((bounding >> number) & 1)) || missing+=("CAP_${names[number]}")
  done
  if ((${#missing[@]})); then
    config="$(jq --args "$filter"' |= map_values(map(select(. as $c | $ARGS.positional | index($c) | not)))' \
      "${missing[@]}" <"$file")"
    printf '%s\n' "$config" >"$file"
  fi
fi
exec runc "$@"
