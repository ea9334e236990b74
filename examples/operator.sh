#!/usr/bin/env bash
# The operator's side of the quick start (docs/sdk-quickstart.md): creates the module and adds a
# PID with a password and a monthly quota, through the HTTP API of a running server.
#
#   PP=http://127.0.0.1:8080 ADMIN_TOKEN=<token> examples/operator.sh
#
# `standalone` prints the admin token on its first line ("PidPool admin token: ...") unless it was
# given --admin-token. Exits non-zero when a call fails or the batch was not applied.
set -euo pipefail
PP="${PP:-http://127.0.0.1:8080}"
: "${ADMIN_TOKEN:?set ADMIN_TOKEN to the admin token (standalone prints it at start-up)}"
MODULE="${PIDPOOL_MODULE:-demo#orders#sender}"
PID="${PIDPOOL_PID:-demo-1}"
module_path=${MODULE//#/%23}
H=(-sS --fail-with-body -H "Authorization: Bearer $ADMIN_TOKEN" -H "Content-Type: application/json")

# 1. the module: how many servers run it and its monthly demand (creates it)
curl "${H[@]}" -X PUT "$PP/api/v1/modules/$module_path?wait=true" -d '{"servers": 1, "monthlyDemand": 1000}'
echo

# 2. a PID (third-party account): the server seals the password before storing it
answer=$(curl "${H[@]}" "$PP/api/v1/batches?wait=true" -d '{"operations": [{"type": "ADD", "module": "'"$MODULE"'",
  "pids": [{"id": "'"$PID"'", "secret": "pw-'"$PID"'", "monthlyQuota": 1000,
            "attributes": {"endpoint": "https://platform.example/eu"}}]}]}')
echo "$answer"
case "$answer" in
  *'"status":"DEALED"'*) ;;
  *) echo "operator.sh: the batch was not applied (see results above)" >&2; exit 1 ;;
esac

# 3. what the cluster sees: the module, its PIDs and instances
curl "${H[@]}" "$PP/api/v1/modules/$module_path"
echo
