#!/bin/sh
# Creates the Mosquitto password file for deploy/mosquitto.conf and the env
# files that docker-compose.yml reads (broker.env: every user's; USER.env:
# that user's only), with a random password per user:
#   livegain (the service), relay (feeds moves in), viewer (reads results),
#   worker (engine workers: livegain worker), gateway (viewer gateways:
#   livegain gateway, reads results).
# Usage: deploy/broker-users.sh [OUTDIR]   (default: deploy/secrets)
# Uses the local mosquitto_passwd if there is one, else the broker image's.
# An existing password file is kept: delete OUTDIR to start again.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/secrets}
mkdir -p "$out"
umask 077
if [ -e "$out/passwd" ]; then
  echo "$out/passwd exists: kept (delete $out to make new passwords)" >&2
  exit 0
fi
: > "$out/passwd"
: > "$out/broker.env"
for user in livegain relay viewer worker gateway; do
  pass=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  if command -v mosquitto_passwd >/dev/null 2>&1; then
    mosquitto_passwd -b "$out/passwd" "$user" "$pass"
  else
    docker run --rm -v "$out:/out" eclipse-mosquitto:2 \
      mosquitto_passwd -b /out/passwd "$user" "$pass"
  fi
  upper=$(echo "$user" | tr a-z A-Z)
  echo "BROKER_${upper}_PASSWORD=$pass" >> "$out/broker.env"
  # One file per user too, for a container that must hold its own only.
  echo "BROKER_${upper}_PASSWORD=$pass" > "$out/$user.env"
done
chmod 600 "$out/passwd" "$out"/*.env
echo "wrote $out/passwd and $out/broker.env (keep them secret)" >&2
