#!/usr/bin/env bash
# Jar count and size of the example's runtime class path (classpath.sh), and of the SDK's part of
# it (without the example's own jar and logback).
# Build first: mvn -B -pl examples -am package -DskipTests
set -euo pipefail
entries=$("$(dirname "$0")/classpath.sh" | tail -n +2)
summary() { xargs -r stat -c %s | awk -v what="$1" '{n++; s+=$1} END {printf "%-24s %3d jars %6.2f MB\n", what, n, s/1048576}'; }
echo "$entries" | summary "example (SDK + logback)"
echo "$entries" | grep -v -e '/ch/qos/logback/' -e '/io/micrometer/' -e '/org/hdrhistogram/' -e '/org/latencyutils/' \
  | summary "SDK alone"
