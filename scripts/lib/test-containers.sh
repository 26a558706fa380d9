# Shared by scripts/test.sh (sourced, not run): the containers and networks the integration tests
# start (TestServices in the contract test-jar) carry the label supermarket.test and their JVM's
# pid (supermarket.test.pid). They are removed when that JVM exits, but a JVM killed outright
# leaves them behind: remove_leftover_test_containers removes those whose JVM is gone, and leaves
# alone the ones of a test run still going (another checkout using the same engine).
# Expects: a log function.

test_jvm_alive() { [[ -n "$1" ]] && kill -0 "$1" 2>/dev/null; }

remove_leftover_test_containers() {
  local id pid
  for id in $(docker ps -aq --filter label=supermarket.test); do
    pid="$(docker inspect --format '{{ index .Config.Labels "supermarket.test.pid" }}' "$id")"
    test_jvm_alive "$pid" && continue
    log "removing the leftover test container $id (its JVM, pid $pid, is gone)"
    docker rm -f -v "$id" >/dev/null
  done
  for id in $(docker network ls -q --filter label=supermarket.test); do
    pid="$(docker network inspect --format '{{ index .Labels "supermarket.test.pid" }}' "$id")"
    test_jvm_alive "$pid" && continue
    log "removing the leftover test network $id (its JVM, pid $pid, is gone)"
    docker network rm "$id" >/dev/null
  done
}
