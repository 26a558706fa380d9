#!/bin/bash
# The official rabbitmq image's entrypoint contract: run as root, it hands the data directory to
# the rabbitmq user and starts the command as that user; RABBITMQ_ERLANG_COOKIE, when set, becomes
# the node's cookie; long host names turn on long node names. The server (CMD rabbitmq-server)
# replaces this shell, so "docker stop" (TERM) reaches it and it shuts down cleanly.
set -euo pipefail

if [[ "${1:-}" == -* ]]; then
    set -- rabbitmq-server "$@"
fi

if [[ "$1" == rabbitmq* && "$(id -u)" == 0 ]]; then
    if [[ "$1" == rabbitmq-server ]]; then
        find /var/lib/rabbitmq \! -user rabbitmq -exec chown rabbitmq:rabbitmq '{}' +
    fi
    exec gosu rabbitmq "$BASH_SOURCE" "$@"
fi

if [[ -n "${RABBITMQ_ERLANG_COOKIE:-}" ]]; then
    cookie="$HOME/.erlang.cookie"
    if [[ "$(cat "$cookie" 2>/dev/null)" != "$RABBITMQ_ERLANG_COOKIE" ]]; then
        chmod 600 "$cookie" 2>/dev/null || true
        printf '%s' "$RABBITMQ_ERLANG_COOKIE" > "$cookie"
        chmod 400 "$cookie"
    fi
fi

if [[ -z "${RABBITMQ_USE_LONGNAME:-}" && "$(hostname)" != "$(hostname -s)" ]]; then
    export RABBITMQ_USE_LONGNAME=true
fi

exec "$@"
