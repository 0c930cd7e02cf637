#!/bin/sh
# localize_static.sh LD OBJCOPY AR IN.a OUT.a
# libsotls.a as one relocatable object in which only the public API is
# global. Everything else (mbedTLS, the internal sotls_* and p256_*
# functions) is compiled with hidden visibility, and --localize-hidden makes
# those symbols local once the partial link (ld -r) has bound every internal
# reference: a program can then link libsotls.a beside another mbedTLS
# without "multiple definition". The global set is the shared library's
# export set; the install test checks both.
set -eu
ld=$1 objcopy=$2 ar=$3 in=$4 out=$5
tmp="$out.tmp.o"
trap 'rm -f "$tmp"' EXIT
"$ld" -r --whole-archive "$in" -o "$tmp"
"$objcopy" --localize-hidden "$tmp"
rm -f "$out"
"$ar" rcs "$out" "$tmp"
