# shellcheck shell=bash
# Shared by tests/vm/*.sh (sourced, not run). Paths, logging and the apt
# options that keep our downloads in the project's cache.

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$VM_DIR/../.." && pwd -P)
CACHE=${SOTLS_VM_CACHE:-$ROOT/.cache/vm}
mkdir -p "$CACHE"

# Debian's 6.1 kernel flavour the VM boots; the ABI number (the "N" of
# 6.1.0-N-amd64) is the newest one the archive offers unless SOTLS_VM_KVER
# names one, and is remembered in $CACHE/kver so later runs stay offline.
KFLAVOUR=amd64 # used by prepare.sh
export KFLAVOUR

say() { echo "vm: $*" >&2; }
die() { echo "vm: error: $*" >&2; exit 1; }

is_root() { [ "$(id -u)" -eq 0 ]; }

pkg_installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

# Installs the Debian packages named, those missing only (needs root).
ensure_packages() {
	local missing=() p
	for p in "$@"; do
		pkg_installed "$p" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	is_root || die "missing packages: ${missing[*]} (run as root, or install them)"
	say "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends \
		"${missing[@]}" >"$CACHE/apt-install.log" 2>&1; then
		apt-get update -q -o DPkg::Lock::Timeout=600 >/dev/null 2>&1 || true
		apt-get install -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends \
			"${missing[@]}" >"$CACHE/apt-install.log" 2>&1 ||
			{ tail -20 "$CACHE/apt-install.log" >&2; die "apt-get install ${missing[*]} failed"; }
	fi
}

# apt-get download into the current directory, as root without the sandbox
# user (which could not write to our cache).
apt_download() {
	apt-get -q -o APT::Sandbox::User=root download "$@" >/dev/null
}

# Runs "$@" holding an exclusive lock on $CACHE/$1.lock (VM tests may run in
# parallel under meson; preparing the cache must happen once).
with_lock() {
	local name=$1
	shift
	(
		flock -w 1800 9 || die "timed out waiting for $CACHE/$name.lock"
		"$@"
	) 9>"$CACHE/$name.lock"
}
