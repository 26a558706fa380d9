#!/bin/bash
# Starts RabbitMQ with definitions.json and then gives the application user its password.
#
# Why: definitions.json may not carry a password (no credentials in the repository), and a
# definitions import at boot suppresses RABBITMQ_DEFAULT_USER/PASS. So the user is declared
# there without a password, and the password comes from the environment (.env) once the node
# is up. The compose health check authenticates as that user, so the services, which wait for
# "healthy", never see the broker before the password is set.
set -euo pipefail

: "${RABBITMQ_APP_PASSWORD:?RABBITMQ_APP_PASSWORD must be set (see .env.example)}"

docker-entrypoint.sh rabbitmq-server &
server=$!
# This script is PID 1: pass "docker stop" on to the broker so it shuts down cleanly.
trap 'kill -TERM "$server"' TERM INT

# The node takes a few seconds to accept CLI commands; give it two minutes at most.
for _ in $(seq 60); do
    if rabbitmqctl --quiet await_startup >/dev/null 2>&1; then
        break
    fi
    sleep 2
done
rabbitmqctl --quiet change_password supermarket "$RABBITMQ_APP_PASSWORD"

wait "$server"
