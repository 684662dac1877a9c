# Shared helpers for build.sh: logging, host prerequisites, the Debian mirror. Sourced, not run.

log() { printf '[vm-images %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Host packages the build uses; installed with apt when missing.
HOST_PACKAGES=(debootstrap debian-archive-keyring seabios e2fsprogs cpio gzip zstd)

ensure_host_tools() {
    local missing=() pkg
    for pkg in "${HOST_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing+=("$pkg")
    done
    if ((${#missing[@]})); then
        log "installing host packages: ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2 \
            || { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive \
                apt-get install -y --no-install-recommends "${missing[@]}" >&2; } \
            || die "could not install ${missing[*]}"
    fi
    command -v node >/dev/null || die "node is needed to pack the image"
}

# The Debian mirror (and security mirror) the host's apt uses, so the build needs no other
# network access. STACKDOCS_DEBIAN_MIRROR / STACKDOCS_DEBIAN_SECURITY override them.
apt_uris() {
    cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk 'tolower($1)=="uris:" {for (i=2;i<=NF;i++) print $i}'
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
        | awk '$1=="deb" {for (i=2;i<=NF;i++) if ($i ~ /^(https?|file):/) {print $i; break}}'
}

debian_mirror() {
    if [[ -n ${STACKDOCS_DEBIAN_MIRROR:-} ]]; then echo "$STACKDOCS_DEBIAN_MIRROR"; return; fi
    local uri
    uri=$(apt_uris | grep -E '/debian/?$' | head -n1)
    echo "${uri:-http://deb.debian.org/debian}"
}

debian_security_mirror() {
    if [[ -n ${STACKDOCS_DEBIAN_SECURITY:-} ]]; then echo "$STACKDOCS_DEBIAN_SECURITY"; return; fi
    local uri
    uri=$(apt_uris | grep -E '/debian-security/?$' | head -n1)
    echo "${uri:-http://deb.debian.org/debian-security}"
}
