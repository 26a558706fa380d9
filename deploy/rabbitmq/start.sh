#!/bin/bash
# Starts RabbitMQ, imports definitions.json once the node is up, deletes the "guest" user a first
# boot creates, and then gives each service's user its password.
#
# Why: definitions.json may not carry a password (no credentials in the repository). So the users
# (one per service, each with only the rights its service needs) are declared there without a
# password (an empty hash: no login), and the passwords come from the environment (.env) once the
# node is up. The definitions are imported here rather than at boot (rabbitmq.conf says why). The
# compose health check authenticates as every service user, so the services, which wait for
# "healthy", never see the broker before the topology is there and their password is set. There
# is no administrator user: the topology and policies come from definitions.json, and an operator
# uses rabbitmqctl inside the container.
#
# This script is PID 1: it passes "docker stop" (TERM) on to the broker and exits only once the
# broker has finished shutting down, so the container never ends in the middle of it.
set -uo pipefail

# user=the variable holding its password
users=(purchase-api=RABBITMQ_PURCHASE_API_PASSWORD store-service=RABBITMQ_STORE_SERVICE_PASSWORD
       purchases-service=RABBITMQ_PURCHASES_SERVICE_PASSWORD)
for entry in "${users[@]}"; do
    variable="${entry#*=}"
    if [[ -z "${!variable:-}" ]]; then
        echo "start.sh: $variable must be set (see .env.example)" >&2
        exit 1
    fi
done

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
if kill -0 "$server" 2>/dev/null && ! rabbitmqctl --quiet import_definitions /etc/rabbitmq/definitions.json; then
    echo "start.sh: could not import /etc/rabbitmq/definitions.json; stopping the broker" >&2
    kill -TERM "$server"
fi
# Only a first boot creates it; later ones find none.
rabbitmqctl --quiet delete_user guest >/dev/null 2>&1 || true
for entry in "${users[@]}"; do
    user="${entry%%=*}" variable="${entry#*=}"
    if kill -0 "$server" 2>/dev/null && ! rabbitmqctl --quiet change_password "$user" "${!variable}"; then
        echo "start.sh: could not set the password of user $user; stopping the broker" >&2
        kill -TERM "$server"
        break
    fi
done

# A trapped signal interrupts "wait" while the broker is still stopping: wait again until it is gone.
while true; do
    wait "$server"
    status=$?
    kill -0 "$server" 2>/dev/null || exit "$status"
done
