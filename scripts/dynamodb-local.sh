#!/usr/bin/env bash
# Runs DynamoDB Local 2.6.1 (from ~/.m2, the purchases-service test dependency) in memory, in the
# foreground, for running purchases-service with the dynamodb profile locally.
# Usage: scripts/dynamodb-local.sh [port, default 8000]
# Then: SPRING_PROFILES_ACTIVE=dynamodb DYNAMODB_ENDPOINT=http://localhost:8000 DYNAMODB_CREATE_TABLE=true java -jar ...
set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi

port="${1:-8000}"
cd "$(dirname "$0")/.."
JAVA_HOME="$(scripts/find-jdk.sh)"
export JAVA_HOME
# The build copies the sqlite4java natives there (process-test-resources) and writes the classpath.
./mvnw -B -ntp -q -pl purchases-service -am process-test-resources dependency:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile=target/dynamodb-local.classpath >/dev/null
# Run from target/: DynamoDB Local drops a metadata file into its working directory.
cd purchases-service/target
exec "$JAVA_HOME/bin/java" -Dsqlite4java.library.path=native-libs \
  -cp "$(cat dynamodb-local.classpath)" \
  com.amazonaws.services.dynamodbv2.local.main.ServerRunner -inMemory -port "$port"
