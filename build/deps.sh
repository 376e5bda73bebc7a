#!/usr/bin/env bash
# Installs the system packages a target needs: with apt-get when run as root,
# otherwise prints the one command to run. Usage: build/deps.sh PACKAGE:COMMAND...
# (COMMAND is what must be on PATH for PACKAGE to count as installed; for a
# C library, pc=NAME: the pkg-config module that must exist).
set -euo pipefail
missing=()
for pair in "$@"; do
  pkg=${pair%%:*}
  cmd=${pair#*:}
  case $cmd in
    pc=*) pkg-config --exists "${cmd#pc=}" 2>/dev/null || missing+=("$pkg") ;;
    *) command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg") ;;
  esac
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "missing system packages: ${missing[*]}" >&2
  echo "install them with:  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
