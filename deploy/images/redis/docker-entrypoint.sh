#!/bin/bash
# The official redis image's entrypoint contract: options alone (or a .conf first) mean
# redis-server; run as root, the server runs as user redis. Without a configuration file,
# protected mode is off as in the official image (compiled so there), so other containers and
# the host reach the server; an explicit --protected-mode among the arguments still wins.
set -euo pipefail

if [[ "${1:-}" == -* || "${1:-}" == *.conf ]]; then
    set -- redis-server "$@"
fi

if [[ "$1" == redis-server && "$(id -u)" == 0 ]]; then
    find . \! -user redis -exec chown redis '{}' +
    exec gosu redis "$BASH_SOURCE" "$@"
fi

if [[ "$1" == redis-server && ! "${2:-}" =~ \.conf$|^-(v|h|-version|-help|-test-memory)$ && " $* " != *" --protected-mode "* ]]; then
    shift
    set -- redis-server --protected-mode no "$@"
fi

[[ "$(umask)" == 0022 ]] && umask 0077
exec "$@"
