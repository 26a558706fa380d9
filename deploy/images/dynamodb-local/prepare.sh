#!/usr/bin/env bash
# Completes the build context of the dynamodb-local image (scripts/images.sh passes its
# directory): DynamoDB Local's jars as scripts/dynamodb-local.sh resolves them from Maven
# Central, in DynamoDBLocal_lib/ as in the official image, with the sqlite4java library for
# Linux x86-64 next to sqlite4java's jar, where sqlite4java looks first.
set -euo pipefail
context="$1"
cd "$(dirname "$0")/../../.."
scripts/dynamodb-local.sh --resolve
rm -rf "$context/DynamoDBLocal_lib" && mkdir -p "$context/DynamoDBLocal_lib"
tr ':' '\n' <scripts/dynamodb-local/target/classpath | grep '\.jar$' | xargs cp -t "$context/DynamoDBLocal_lib"
cp scripts/dynamodb-local/target/native-libs/libsqlite4java-linux-amd64-*.so "$context/DynamoDBLocal_lib/"
