#!/bin/bash
# Starts RabbitMQ with definitions.json and then gives the application user its password.
#
# Why: definitions.json may not carry a password (no credentials in the repository), and a
# definitions import at boot suppresses RABBITMQ_DEFAULT_USER/PASS. So the user is declared
# there without a password, and the password comes from the environment (.env) once the node
# is up. The compose health check authenticates as that user, so the services, which wait for
# "healthy", never see the broker before the password is set.
#
# This script is PID 1: it passes "docker stop" (TERM) on to the broker and exits only once the
# broker has finished shutting down, so the container never ends in the middle of it.
set -uo pipefail

: "${RABBITMQ_APP_PASSWORD:?RABBITMQ_APP_PASSWORD must be set (see .env.example)}"

docker-entrypoint.sh rabbitmq-server &
server=$!
trap 'kill -TERM "$server" 2>/dev/null' TERM INT

# The node takes a few seconds to accept CLI commands; give it two minutes at most.
for _ in $(seq 60); do
    if rabbitmqctl --quiet await_startup >/dev/null 2>&1 || ! kill -0 "$server" 2>/dev/null; then
        break
    fi
    sleep 2
done
if kill -0 "$server" 2>/dev/null && ! rabbitmqctl --quiet change_password supermarket "$RABBITMQ_APP_PASSWORD"; then
    echo "start.sh: could not set the password of user supermarket; stopping the broker" >&2
    kill -TERM "$server"
fi

# A trapped signal interrupts "wait" while the broker is still stopping: wait again until it is gone.
while true; do
    wait "$server"
    status=$?
    kill -0 "$server" 2>/dev/null || exit "$status"
done
