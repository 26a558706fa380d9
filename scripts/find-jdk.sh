#!/usr/bin/env bash
# Prints the home of a JDK 21 or newer: $JAVA_HOME if it qualifies, else the java on PATH,
# else the newest one under /usr/lib/jvm or /opt. Exits 1 with a hint when there is none.
# Usage: export JAVA_HOME=$(scripts/find-jdk.sh)
set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi

major_of() { # $1 = a JDK home; prints its feature version, or nothing
  local release="$1/release"
  [[ -x "$1/bin/javac" && -f "$release" ]] || return 0
  sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$release"
}

candidates=()
[[ -n "${JAVA_HOME:-}" ]] && candidates+=("$JAVA_HOME")
if command -v javac >/dev/null 2>&1; then
  candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")")
fi
for dir in /usr/lib/jvm/* /opt/*jdk* /opt/java/*; do
  [[ -d "$dir" ]] && candidates+=("$dir")
done

best="" best_major=0
for home in "${candidates[@]}"; do
  major=$(major_of "$home")
  if [[ -n "$major" && "$major" -ge 21 ]]; then
    # The first qualifying one wins when the user chose it; otherwise prefer the newest.
    if [[ "$home" == "${JAVA_HOME:-}" ]]; then best="$home"; break; fi
    if [[ "$major" -gt "$best_major" ]]; then best="$home" best_major="$major"; fi
  fi
done

if [[ -z "$best" ]]; then
  echo "No JDK 21+ found (looked at JAVA_HOME, PATH, /usr/lib/jvm, /opt). Install one, e.g. apt-get install openjdk-21-jdk-headless or a Temurin 21+." >&2
  exit 1
fi
echo "$best"
