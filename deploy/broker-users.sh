#!/bin/sh
# Creates the Mosquitto password file for deploy/mosquitto.conf and the env
# files that docker-compose.yml reads (broker.env: every user's; USER.env:
# that user's only), with a random password per user:
#   livegain (the service), relay (feeds moves in), viewer (reads results),
#   gateway (viewer gateways: livegain gateway, reads results), and one user
#   per engine worker (livegain worker): `worker`, or the names given.
# Usage: deploy/broker-users.sh [OUTDIR [WORKER...]]   (default: deploy/secrets worker)
# Also writes OUTDIR/acl: deploy/acl with a section for each worker user it
# lacks (a worker's user name is its identity: it reads only its own jobs and
# writes only its own results and presence). Mount that file as the broker's
# acl_file when you add workers beyond `worker`.
# Uses the local mosquitto_passwd if there is one, else the broker image's.
# Users already in the password file keep their password: delete OUTDIR to
# start again; run it again with more worker names to add workers.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/secrets}
[ $# -gt 0 ] && shift
workers=${*:-worker}
for w in $workers; do
  case $w in
    *[!A-Za-z0-9_-]* | "" ) echo "worker user '$w': letters, digits, '_' and '-' only" >&2; exit 2 ;;
    livegain | relay | viewer | gateway ) echo "worker user '$w' is taken" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
umask 077
touch "$out/passwd" "$out/broker.env"
made=0
for user in livegain relay viewer gateway $workers; do
  if grep -q "^$user:" "$out/passwd"; then
    continue  # kept, with its password
  fi
  pass=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  if command -v mosquitto_passwd >/dev/null 2>&1; then
    mosquitto_passwd -b "$out/passwd" "$user" "$pass"
  else
    docker run --rm -v "$out:/out" eclipse-mosquitto:2 \
      mosquitto_passwd -b /out/passwd "$user" "$pass"
  fi
  upper=$(echo "$user" | tr a-z- A-Z_)
  echo "BROKER_${upper}_PASSWORD=$pass" >> "$out/broker.env"
  # One file per user too, for a container that must hold its own only.
  echo "BROKER_${upper}_PASSWORD=$pass" > "$out/$user.env"
  made=$((made + 1))
done
# The ACL: deploy/acl, and a section for each worker user it does not have
# (every worker user of the password file, so that adding workers keeps the
# earlier ones).
cp "$here/acl" "$out/acl.new"
for user in $(cut -d: -f1 "$out/passwd"); do
  case $user in livegain | relay | viewer | gateway) continue ;; esac
  if ! grep -q "^user $user\$" "$here/acl"; then
    printf '\nuser %s\ntopic read livegain/engine/jobs/+/%s\ntopic write livegain/engine/results/+/%s\ntopic write livegain/engine/workers/%s\n' \
      "$user" "$user" "$user" "$user" >> "$out/acl.new"
  fi
done
mv "$out/acl.new" "$out/acl"
chmod 600 "$out/passwd" "$out"/*.env
chmod 644 "$out/acl"
echo "$made new user(s) in $out/passwd and $out/broker.env; ACL in $out/acl (keep the secrets secret)" >&2
