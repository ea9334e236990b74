#!/usr/bin/env bash
# Prints the example's runtime class path, one entry per line: its jar, then the Class-Path of the
# jar's manifest (repository layout, i.e. the libraries a user's build resolves for it) resolved
# against the local Maven repository; PidPool's own modules come from this checkout's target
# folders. Build first: mvn -B -pl examples -am package -DskipTests
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
repo="${MAVEN_REPO:-$HOME/.m2/repository}"
jar=$(ls "$root"/examples/target/pid-sdk-example-*.jar 2>/dev/null | head -1)
[ -n "$jar" ] || { echo "classpath.sh: no examples/target/pid-sdk-example-*.jar; build it first" >&2; exit 1; }
echo "$jar"
manifest() { # unzip if there, else the JDK's jar tool
  if command -v unzip >/dev/null 2>&1; then unzip -p "$jar" META-INF/MANIFEST.MF; return; fi
  local tmp; tmp=$(mktemp -d)
  (cd "$tmp" && "${JAVA_HOME:+$JAVA_HOME/bin/}jar" xf "$jar" META-INF/MANIFEST.MF && cat META-INF/MANIFEST.MF)
  rm -rf "$tmp"
}
manifest | tr -d '\r' \
  | awk '/^Class-Path:/ {on=1; sub(/^Class-Path: /, ""); printf "%s", $0; next}
         on && /^ / {sub(/^ /, ""); printf "%s", $0; next}
         {on=0}' \
  | tr ' ' '\n' | while read -r entry || [ -n "$entry" ]; do
      [ -n "$entry" ] || continue
      case "$entry" in
        io/pidpool/*)
          module=$(echo "$entry" | cut -d/ -f3)
          built="$root/$module/target/$(basename "$entry")"
          if [ -f "$built" ]; then echo "$built"; else echo "$root/$module/target/classes"; fi ;;
        *) echo "$repo/$entry" ;;
      esac
    done
