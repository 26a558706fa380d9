#!/usr/bin/env bash
# Completes the build context of the java image (scripts/images.sh passes its directory): the
# JDK that scripts/find-jdk.sh finds, copied again only when it is another one.
set -euo pipefail
context="$1"
jdk="$(cd "$(dirname "$0")/../../.." && scripts/find-jdk.sh)"
if ! cmp -s "$jdk/release" "$context/jdk/release"; then
  rm -rf "$context/jdk"
  cp -a "$jdk" "$context/jdk"
fi
