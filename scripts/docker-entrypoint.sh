#!/bin/sh
# Entry point of the Docker image (docs/deployment.md, docs/operations.md §3).
#   no arguments or "serve": start the server; under Litestream when LITESTREAM_REPLICA_URL is
#     set, after restoring the database from the replica if the file is missing (a new volume
#     on a replacement machine), so a lost disk comes back by itself.
#   anything else: an admin command of the same binary, e.g. `docker run ... key list`; also
#     "serve" with more words (`serve --help`), which `crm` answers (serve takes no options).
set -eu

if [ "$#" -gt 1 ] || { [ "$#" -eq 1 ] && [ "$1" != "serve" ]; }; then
  exec crm "$@"
fi

: "${CRM_DB_PATH:?CRM_DB_PATH must be set}"

if [ -n "${LITESTREAM_REPLICA_URL:-}" ]; then
  config="${LITESTREAM_CONFIG:-/etc/litestream.yml}"
  if [ -z "${CRM_SECRET_KEY:-}" ]; then
    echo "crm: warning: CRM_SECRET_KEY is unset; the key file beside the database is not replicated," \
      "so webhook secrets of a restored database cannot be decrypted elsewhere (docs/deployment.md)" >&2
  fi
  # Exit 0 when the database exists already or the replica is still empty (first start).
  litestream restore -config "$config" -if-db-not-exists -if-replica-exists "$CRM_DB_PATH"
  # Litestream runs as PID 1 and supervises `crm serve`: it replicates while the server runs, passes
  # SIGTERM on, and exits with the server.
  exec litestream replicate -config "$config" -exec "crm serve"
fi

exec crm serve
