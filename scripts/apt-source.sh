# Sourced by scripts that need a Debian source package of another release:
#   apt_source SUITE CACHE_DIR PACKAGE...
# downloads (without unpacking) each PACKAGE's source files of SUITE into
# CACHE_DIR/dl. The deb-src entries are derived from this machine's own apt
# sources, with this release's codename replaced by SUITE, into a private
# apt configuration under CACHE_DIR, so neither the system's apt state nor
# this repository names any archive host. Returns non-zero, with apt's logs
# on stderr, if a download fails.

apt_source() {
  local suite=$1 cache=$2 here f
  shift 2
  here=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  if [ -z "$here" ]; then
    echo "apt-source: /etc/os-release names no VERSION_CODENAME" >&2
    return 1
  fi
  rm -rf "$cache"
  mkdir -p "$cache/sources" "$cache/lists/partial" "$cache/archives/partial" "$cache/dl"

  # deb822 files: every "Types: deb" stanza becomes deb-src of $suite
  # (bookworm-updates -> trixie-updates, and so on).
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] || continue
    sed -E -e 's/^(Types:.*)\bdeb\b/\1deb-src/' \
           -e "/^Suites:/s/\\b$here\\b/$suite/g" "$f" > "$cache/sources/$(basename "$f")"
  done
  # One-line format, in sources.list and sources.list.d/*.list.
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -e "$f" ] || continue
    sed -nE "s/^deb(\\s.*\\s)$here(\\S*\\s)/deb-src\\1$suite\\2/p" "$f" \
      > "$cache/sources/$(basename "$f" .list)-src.list"
  done

  local apt_opts=(
    -o Dir::Etc::SourceList=/dev/null
    -o "Dir::Etc::SourceParts=$cache/sources"
    -o "Dir::State::Lists=$cache/lists"
    -o "Dir::Cache=$cache"
    -o APT::Sandbox::User=root
  )
  echo "apt-source: reading $suite's source indexes"
  # A suite the archive lacks (e.g. no $suite-security yet) must not stop the
  # others; whether the packages came is for the caller to check.
  apt-get "${apt_opts[@]}" -q update >"$cache/update.log" 2>&1 || true
  if ! (cd "$cache/dl" && apt-get "${apt_opts[@]}" -q source --download-only "$@" \
        >"$cache/source.log" 2>&1); then
    echo "apt-source: apt-get source $* ($suite) failed:" >&2
    cat "$cache/update.log" "$cache/source.log" >&2
    return 1
  fi
}
