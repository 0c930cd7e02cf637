#!/bin/sh
# Fails if the shared library exports any symbol that is not sotls_*.
set -eu
lib="$1"
syms=$(nm -D --defined-only "$lib" | awk '{print $3}')
[ -n "$syms" ] || { echo "no exported symbols in $lib"; exit 1; }
bad=$(printf '%s\n' "$syms" | grep -v '^sotls_' || true)
if [ -n "$bad" ]; then
  echo "symbols exported outside the sotls_ namespace:"
  printf '%s\n' "$bad"
  exit 1
fi
echo "$(printf '%s\n' "$syms" | wc -l) symbols exported, all sotls_*"
