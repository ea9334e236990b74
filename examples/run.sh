#!/usr/bin/env bash
# Runs the example business server (io.pidpool.examples.BusinessServer) on its runtime class path.
# Settings from the environment: PIDPOOL_ZOOKEEPER, PIDPOOL_REDIS, PIDPOOL_SECRET_KEY_FILE,
# PIDPOOL_MODULE (see BusinessServer). Build first: mvn -B -pl examples -am package -DskipTests
set -euo pipefail
cp=$("$(dirname "$0")/classpath.sh" | paste -sd: -)
exec "${JAVA_HOME:+$JAVA_HOME/bin/}java" ${JAVA_OPTS:-} -cp "$cp" io.pidpool.examples.BusinessServer "$@"
