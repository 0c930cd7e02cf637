#!/usr/bin/env bash
# Prepares everything a VM test needs, idempotently, under .cache/vm/:
#   - host packages: qemu-system-x86, busybox-static, kmod, cpio, xz-utils, make
#   - Debian's linux-image-6.1.0-N-amd64 (downloaded and extracted, never
#     installed), linux-headers-6.1.0-N-amd64 (installed), and the two ARIA
#     source files from linux-source-6.1 of the same version
#   - aria_generic.ko built out of tree against those headers
#   - the list of modules (with dependencies) the VM loads: tls gcm ctr ghash-generic
# Prints KEY=VALUE lines (KVER, VMLINUZ, KMODDIR, ARIA_KO, MODULES) on stdout.
# A second run downloads and builds nothing.
set -euo pipefail
. "$(dirname "$0")/common.sh"

# Modules the tests want loaded, by name; their dependencies come from modules.dep.
BASE_MODULES=(tls gcm ctr ghash-generic)

host_packages() {
	ensure_packages qemu-system-x86 busybox-static kmod cpio xz-utils make gcc
}

# The kernel ABI string, e.g. 6.1.0-57-amd64.
choose_kver() {
	if [ -n "${SOTLS_VM_KVER:-}" ]; then
		echo "$SOTLS_VM_KVER"
		return
	fi
	if [ -s "$CACHE/kver" ]; then
		cat "$CACHE/kver"
		return
	fi
	local kver
	kver=$(apt-cache search --names-only "^linux-image-6\.1\.0-[0-9]+-$KFLAVOUR\$" 2>/dev/null |
		awk '{print $1}' | sed "s/^linux-image-//" | sort -V | tail -1)
	if [ -z "$kver" ] && is_root; then
		apt-get update -q -o DPkg::Lock::Timeout=600 >/dev/null
		kver=$(apt-cache search --names-only "^linux-image-6\.1\.0-[0-9]+-$KFLAVOUR\$" |
			awk '{print $1}' | sed "s/^linux-image-//" | sort -V | tail -1)
	fi
	[ -n "$kver" ] || die "no linux-image-6.1.0-*-$KFLAVOUR in the apt archive"
	echo "$kver"
}

# Downloads package=version into $CACHE/debs unless a matching .deb is there.
# Prints the .deb's path.
fetch_deb() {
	local pkg=$1 ver=$2 f
	mkdir -p "$CACHE/debs"
	f=$(ls "$CACHE/debs/${pkg}_${ver/*:/}_"*.deb 2>/dev/null | head -1 || true)
	if [ -z "$f" ]; then
		say "downloading $pkg $ver"
		(cd "$CACHE/debs" && apt_download "$pkg=$ver") || die "apt-get download $pkg=$ver failed"
		f=$(ls "$CACHE/debs/${pkg}_${ver/*:/}_"*.deb 2>/dev/null | head -1 || true)
		[ -n "$f" ] || die "apt-get download $pkg=$ver left no .deb"
	fi
	echo "$f"
}

# Version of a package from the cache stamp, else from apt.
pkg_version() {
	local pkg=$1 stamp="$CACHE/version.$1"
	if [ -s "$stamp" ]; then
		cat "$stamp"
		return
	fi
	local v
	v=$(apt-cache show "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -1)
	[ -n "$v" ] || die "apt knows no package $pkg"
	echo "$v" >"$stamp"
	echo "$v"
}

extract_kernel() {
	local kver=$1
	local kroot=$CACHE/kernel-$kver
	if [ -f "$kroot/.done" ]; then
		return
	fi
	local ver deb
	ver=$(pkg_version "linux-image-$kver")
	deb=$(fetch_deb "linux-image-$kver" "$ver")
	say "extracting $(basename "$deb")"
	rm -rf "$kroot"
	mkdir -p "$kroot"
	dpkg-deb -x "$deb" "$kroot"
	# Debian's packages put modules in /lib/modules (bookworm) or /usr/lib/modules.
	local md
	for md in "$kroot/lib/modules/$kver" "$kroot/usr/lib/modules/$kver"; do
		if [ -d "$md" ]; then
			echo "$md" >"$kroot/.moddir"
		fi
	done
	[ -s "$kroot/.moddir" ] || die "no modules directory in $deb"
	local moddir
	moddir=$(cat "$kroot/.moddir")
	depmod -b "${moddir%/lib/modules/"$kver"}" "$kver"
	[ -f "$kroot/boot/vmlinuz-$kver" ] || die "no boot/vmlinuz-$kver in $deb"
	touch "$kroot/.done"
}

install_headers() {
	local kver=$1
	if [ -f "/usr/src/linux-headers-$kver/Makefile" ]; then
		return
	fi
	ensure_packages "linux-headers-$kver"
	[ -f "/usr/src/linux-headers-$kver/Makefile" ] || die "linux-headers-$kver has no Makefile"
}

# crypto/aria_generic.c and include/crypto/aria.h from linux-source-6.1, the
# same Debian version as the image when the archive still has it.
extract_aria_source() {
	local kver=$1
	local dir=$CACHE/aria-src-$kver
	if [ -f "$dir/.done" ]; then
		return
	fi
	local imgver srcver deb
	imgver=$(pkg_version "linux-image-$kver")
	srcver=$imgver
	if ! apt-cache show "linux-source-6.1=$srcver" >/dev/null 2>&1; then
		srcver=$(pkg_version linux-source-6.1)
		say "linux-source-6.1 $imgver is gone from the archive; using $srcver"
	fi
	deb=$(fetch_deb linux-source-6.1 "$srcver")
	say "extracting the ARIA sources from $(basename "$deb")"
	rm -rf "$dir"
	mkdir -p "$dir/tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir/tmp" --wildcards './usr/src/linux-source-*.tar.xz'
	local tarball
	tarball=$(ls "$dir"/tmp/usr/src/linux-source-*.tar.xz | head -1)
	[ -n "$tarball" ] || die "no kernel source tarball in $deb"
	tar -xJf "$tarball" -C "$dir/tmp" --wildcards --no-anchored \
		'crypto/aria_generic.c' 'crypto/aria.c' 'include/crypto/aria.h' 2>/dev/null || true
	local top
	top=$(find "$dir/tmp" -mindepth 1 -maxdepth 1 -type d -name 'linux-source-*' | head -1)
	[ -n "$top" ] || die "the tarball in $deb has no linux-source-* directory"
	mkdir -p "$dir/include/crypto"
	if [ -f "$top/crypto/aria_generic.c" ]; then
		cp "$top/crypto/aria_generic.c" "$dir/aria_generic.c"
	elif [ -f "$top/crypto/aria.c" ]; then
		cp "$top/crypto/aria.c" "$dir/aria_generic.c"
	else
		die "no crypto/aria_generic.c in $tarball"
	fi
	if [ -f "$top/include/crypto/aria.h" ]; then
		cp "$top/include/crypto/aria.h" "$dir/include/crypto/aria.h"
	fi
	rm -rf "$dir/tmp"
	echo "$srcver" >"$dir/.version"
	touch "$dir/.done"
}

build_aria_module() {
	local kver=$1
	local src=$CACHE/aria-src-$kver bld=$CACHE/aria-build-$kver
	if [ -f "$bld/aria_generic.ko" ] && [ "$bld/aria_generic.ko" -nt "$src/.done" ]; then
		return
	fi
	say "building aria_generic.ko for $kver"
	rm -rf "$bld"
	mkdir -p "$bld"
	cp "$src/aria_generic.c" "$bld/"
	if [ -d "$src/include" ]; then
		cp -r "$src/include" "$bld/"
	fi
	cat >"$bld/Kbuild" <<'EOF'
obj-m := aria_generic.o
ccflags-y := -I$(src)/include
EOF
	if ! make -C "/usr/src/linux-headers-$kver" M="$bld" modules >"$bld/build.log" 2>&1; then
		tail -30 "$bld/build.log" >&2
		die "building aria_generic.ko failed (log: $bld/build.log)"
	fi
	[ -f "$bld/aria_generic.ko" ] || die "kbuild made no aria_generic.ko"
}

# Module files (relative to the modules directory) that BASE_MODULES need,
# dependencies first.
module_closure() {
	local kver=$1
	local kroot=$CACHE/kernel-$kver out=$CACHE/kernel-$kver/.closure
	if [ -s "$out" ]; then
		return
	fi
	local moddir base
	moddir=$(cat "$kroot/.moddir")
	base=${moddir%/lib/modules/"$kver"}
	local m
	for m in "${BASE_MODULES[@]}"; do
		modprobe -d "$base" -S "$kver" --show-depends "$m"
	done | awk '$1 == "insmod" {print $2}' | sed "s|^$moddir/||" | awk '!seen[$0]++' >"$out.tmp"
	[ -s "$out.tmp" ] || die "modprobe --show-depends found none of ${BASE_MODULES[*]}"
	mv "$out.tmp" "$out"
}

main() {
	host_packages
	local kver
	kver=$(choose_kver)
	extract_kernel "$kver"
	echo "$kver" >"$CACHE/kver"
	install_headers "$kver"
	extract_aria_source "$kver"
	build_aria_module "$kver"
	module_closure "$kver"
	local kroot=$CACHE/kernel-$kver
	echo "KVER=$kver"
	echo "VMLINUZ=$kroot/boot/vmlinuz-$kver"
	echo "KMODDIR=$(cat "$kroot/.moddir")"
	echo "ARIA_KO=$CACHE/aria-build-$kver/aria_generic.ko"
	echo "MODULES=$(tr '\n' ' ' <"$kroot/.closure")"
}

with_lock prepare main
