#!/usr/bin/env bash
# Boots Debian's 6.1 kernel in qemu with a busybox initramfs, runs one command
# inside and exits with that command's exit status.
#
#   tests/vm/run.sh [--modules stock|aria] [--bin FILE]... [--env NAME=VALUE]...
#                   [--timeout SECONDS] [--] COMMAND [ARG]...
#
#   --modules stock   tls, gcm, ctr, ghash-generic (+ dependencies) loaded: the
#                     kernel has kTLS but no ARIA, the fallback case (default)
#   --modules aria    the same plus aria_generic.ko built out of tree
#   --bin FILE        copies FILE (and the shared libraries ldd lists for it)
#                     to /bin in the VM; repeatable
#   --env NAME=VALUE  exported before COMMAND runs; repeatable
#   --timeout N       seconds for the whole boot + run (default 300)
#
# Exit status: COMMAND's; 77 when qemu cannot run at all (skip); 124 when the
# VM timed out; 125 when the VM ended without reporting a status. Everything
# the harness needs is prepared by prepare.sh (cached under .cache/vm/).
# Environment: SOTLS_VM_QEMU (the qemu binary), SOTLS_VM_ACCEL (default tcg; "kvm" or "kvm:tcg"), SOTLS_VM_CPU
# (default max), SOTLS_VM_MEM (MiB, default 512), SOTLS_VM_KEEP=1 keeps the
# run directory (initramfs and console log) under .cache/vm/runs/.
set -euo pipefail
. "$(dirname "$0")/common.sh"

modules=stock
timeout_s=300
bins=()
envs=()
while [ $# -gt 0 ]; do
	case $1 in
	--modules) modules=$2; shift 2 ;;
	--modules=*) modules=${1#*=}; shift ;;
	--bin) bins+=("$2"); shift 2 ;;
	--bin=*) bins+=("${1#*=}"); shift ;;
	--env) envs+=("$2"); shift 2 ;;
	--env=*) envs+=("${1#*=}"); shift ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--timeout=*) timeout_s=${1#*=}; shift ;;
	--) shift; break ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || die "no command given (usage: run.sh [options] -- COMMAND [ARG]...)"
case $modules in stock | aria) ;; *) die "--modules must be stock or aria" ;; esac

# Skip (77) only when qemu cannot run at all.
qemu=${SOTLS_VM_QEMU:-qemu-system-x86_64}
if ! command -v "$qemu" >/dev/null 2>&1; then
	if is_root; then
		(ensure_packages qemu-system-x86) || true
	fi
fi
if ! "$qemu" -version >/dev/null 2>&1; then
	echo "vm: SKIP: $qemu cannot run on this machine" >&2
	exit 77
fi

prep=$("$VM_DIR/prepare.sh") || die "preparing the VM failed"
KVER=$(sed -n 's/^KVER=//p' <<<"$prep")
VMLINUZ=$(sed -n 's/^VMLINUZ=//p' <<<"$prep")
KMODDIR=$(sed -n 's/^KMODDIR=//p' <<<"$prep")
ARIA_KO=$(sed -n 's/^ARIA_KO=//p' <<<"$prep")
read -r -a MODFILES <<<"$(sed -n 's/^MODULES=//p' <<<"$prep")"

mkdir -p "$CACHE/runs"
run=$(mktemp -d "$CACHE/runs/run.XXXXXX")
# shellcheck disable=SC2317 # called by the trap
cleanup() { [ "${SOTLS_VM_KEEP:-0}" = 1 ] || rm -rf "$run"; }
trap cleanup EXIT
root=$run/root
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,etc/sotls-vm,lib64}
mkdir -p "$root/lib/x86_64-linux-gnu" "$root/lib/modules/$KVER"

# Copies an executable and the shared libraries it needs.
copy_exe() {
	local src=$1 dest=$2 lib
	[ -f "$src" ] || die "no such file: $src"
	cp -L "$src" "$root$dest"
	chmod 755 "$root$dest"
	# ldd prints "name => /path (addr)" or "/path (addr)"; a static binary has none.
	while read -r lib; do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done < <(ldd "$src" 2>/dev/null | grep -o '/[^ ]*' | grep -v '^/.*:$' || true)
}

copy_exe "$(command -v busybox)" /bin/busybox
cp "$VM_DIR/init.sh" "$root/init"
chmod 755 "$root/init"
for b in "${bins[@]}"; do
	copy_exe "$b" "/bin/$(basename "$b")"
done

# Modules: the base set, and for "aria" the out-of-tree aria_generic.ko.
for f in "${MODFILES[@]}"; do
	mkdir -p "$root/lib/modules/$KVER/$(dirname "$f")"
	cp "$KMODDIR/$f" "$root/lib/modules/$KVER/$f"
done
for f in modules.order modules.builtin modules.builtin.modinfo; do
	[ -f "$KMODDIR/$f" ] && cp "$KMODDIR/$f" "$root/lib/modules/$KVER/"
done
load="tls gcm ctr ghash-generic"
if [ "$modules" = aria ]; then
	mkdir -p "$root/lib/modules/$KVER/extra"
	cp "$ARIA_KO" "$root/lib/modules/$KVER/extra/"
	load="$load aria_generic"
fi
depmod -b "$root" "$KVER"
echo "$load" >"$root/etc/sotls-vm/modules"

# The command and environment, quoted for the VM's sh.
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
{
	for a in "$@"; do printf '%s ' "$(quote "$a")"; done
	echo
} >"$root/etc/sotls-vm/cmd"
{
	echo "export SOTLS_VM_MODULES=$modules"
	for e in "${envs[@]}"; do
		echo "export ${e%%=*}=$(quote "${e#*=}")"
	done
} >"$root/etc/sotls-vm/env"

(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) >"$run/initrd.cpio"

# TCG by default: /dev/kvm may exist yet fail (nested virtualisation), and
# qemu then aborts instead of falling back. SOTLS_VM_ACCEL=kvm (with
# SOTLS_VM_CPU=host) where KVM is known to work.
accel=${SOTLS_VM_ACCEL:-tcg}
cpu=${SOTLS_VM_CPU:-max}
accel_args=()
IFS=: read -r -a accels <<<"$accel"
for a in "${accels[@]}"; do accel_args+=(-accel "$a"); done

say "booting $KVER ($modules modules, accel $accel, timeout ${timeout_s}s): $*"
start=$(date +%s.%N)
set +e
timeout -k 5 "$timeout_s" "$qemu" -nographic -no-reboot \
	"${accel_args[@]}" -cpu "$cpu" -nic none -smp 1 -m "${SOTLS_VM_MEM:-512}" \
	-kernel "$VMLINUZ" -initrd "$run/initrd.cpio" \
	-append "console=ttyS0 panic=-1 quiet loglevel=4 rdinit=/init" \
	</dev/null 2>&1 | tee "$run/console.log" | tr -d '\r'
qrc=${PIPESTATUS[0]}
set -e
end=$(date +%s.%N)
elapsed=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}')

status=$(tr -d '\r' <"$run/console.log" | sed -n 's/^SOTLS_VM_STATUS=\([0-9][0-9]*\).*/\1/p' | tail -1)
if [ -n "$status" ]; then
	say "command exited $status; VM ran ${elapsed}s"
	exit "$status"
fi
if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
	say "timed out after ${timeout_s}s with no status"
	exit 124
fi
say "the VM ended (qemu exit $qrc) without reporting a status after ${elapsed}s"
exit 125
