#!/usr/bin/env bash
# Runs DynamoDB Local (the version the tests use) in memory, in the foreground, for running
# purchases-service with the dynamodb profile locally. Resolves only DynamoDB Local and its
# sqlite4java natives from Maven Central (scripts/dynamodb-local/pom.xml), once; later starts
# take seconds. Needs no build of the platform.
# Usage: scripts/dynamodb-local.sh [port, default 8000]
#        scripts/dynamodb-local.sh --resolve   (only resolve; scripts/images.sh builds its image from it)
# Then: SPRING_PROFILES_ACTIVE=dynamodb PURCHASES_DYNAMODB_ENDPOINT=http://localhost:8000 PURCHASES_DYNAMODB_CREATE_TABLE=true java -jar ...
set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi

port="${1:-8000}"
cd "$(dirname "$0")/.."
JAVA_HOME="$(scripts/find-jdk.sh)"
export JAVA_HOME
runner=scripts/dynamodb-local
if [[ ! -s "$runner/target/classpath" || -n "$(find "$runner/pom.xml" pom.xml -newer "$runner/target/classpath" -print -quit)" ]]; then
  echo "[dynamodb-local] resolving DynamoDB Local: ./mvnw -f $runner/pom.xml generate-resources" >&2
  mkdir -p "$runner/target"
  if ! ./mvnw -B -ntp -f "$runner/pom.xml" generate-resources >"$runner/target/resolve.log" 2>&1; then
    tail -n 30 "$runner/target/resolve.log" >&2
    echo "[dynamodb-local] ERROR: could not resolve DynamoDB Local; the full Maven output is in $runner/target/resolve.log" >&2
    exit 1
  fi
fi
[[ "${1:-}" == --resolve ]] && exit 0
# Run from target/: DynamoDB Local drops a metadata file into its working directory.
cd "$runner/target"
exec "$JAVA_HOME/bin/java" -Dsqlite4java.library.path=native-libs -cp "$(cat classpath)" \
  com.amazonaws.services.dynamodbv2.local.main.ServerRunner -inMemory -port "$port"
