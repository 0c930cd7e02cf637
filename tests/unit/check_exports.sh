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

# The release library carries no test seam (SOTLS_TEST_SEAMS builds only):
# no setter for a fake RNG, clock or syscall, no delay hook.
seams=$(nm "$lib" | grep -E ' sotls_[a-z_]*set_test_' || true)
if [ -n "$seams" ]; then
  echo "test seams linked into $lib:"
  printf '%s\n' "$seams"
  exit 1
fi
# And the one environment variable it may read is SOTLS_CPU (sotls.h).
names=$(strings "$lib" | grep -E '^SOTLS_[A-Z_]+$' | sort -u | tr '\n' ' ')
if [ "$names" != "SOTLS_CPU " ]; then
  echo "environment variables named in $lib: $names(only SOTLS_CPU may be read)"
  exit 1
fi
echo "no test seams; the only environment variable read is SOTLS_CPU"
