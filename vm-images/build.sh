#!/usr/bin/env bash
# Builds the guest image -- kernel, initramfs, the ext4 root cut into gzip chunks, BIOS files and
# manifest.json -- into vm-images/out/<recipe hash>/, from Debian bookworm i386 packages only.
# Needs root (debootstrap runs maintainer scripts in a chroot). Does nothing when the output for
# the current recipe is already complete. Usage: bash vm-images/build.sh [--force | --check]
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${STACKDOCS_VM_OUT:-$HERE/out}
SUITE=bookworm
ARCH=i386
DISK_MIB=2048
# 256 KiB chunks: a first start fetches only the chunks it reads (lib/prestate.ts's wake set);
# measured for the wake and a first command: 4 MiB chunks 36 MiB, 1 MiB chunks 9.4 MiB compressed.
CHUNK_KIB=256
MEMORY_MIB=512
# cryptomgr.notests and noisapnp skip about 4 s of boot (crypto self-tests, ISA PnP probing).
CMDLINE="root=/dev/sda rw console=ttyS0 quiet loglevel=3 tsc=reliable mitigations=off init_on_free=1"
CMDLINE+=" cryptomgr.notests noisapnp"
# noatime: reading a file must not write its inode. Under relatime the first read of each file in
# a day wrote it, so a command that only read files moved the disk on from the saved state and
# the next open booted cold instead of waking.
CMDLINE+=" rootflags=noatime"
# Files whose content defines the image; changing any of them changes the recipe hash. The saved
# state depends on the emulator's options (vm/emulator-options.ts, with its network card) and on
# v86's own version too.
RECIPE=(build.sh lib packages.txt rootfs initramfs agent ../vm/emulator-options.ts ../node_modules/v86/package.json)

# shellcheck source=lib/common.sh
source "$HERE/lib/common.sh"
# shellcheck source=lib/rootfs.sh
source "$HERE/lib/rootfs.sh"
# shellcheck source=lib/initramfs.sh
source "$HERE/lib/initramfs.sh"

recipe_hash() {
    (cd "$HERE" && find "${RECIPE[@]}" -type f ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 \
        | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16
}

main() {
    local force=0
    [[ ${1:-} == --force ]] && force=1
    local hash dest
    hash=$(recipe_hash)
    dest=$OUT/$hash
    # --check: only say whether the image for this recipe is complete (no root needed).
    if [[ ${1:-} == --check ]]; then
        [[ -f $dest/manifest.json ]] && { log "image $hash is complete"; return 0; }
        log "image $hash is not built"
        return 1
    fi
    if [[ $force == 0 && -f $dest/manifest.json ]]; then
        ln -sfn "$hash" "$OUT/latest"
        log "image $hash is complete: $dest"
        return 0
    fi
    [[ $(id -u) == 0 ]] || die "the build needs root (debootstrap chroots into the new tree); see README.md"

    mkdir -p "$OUT"
    exec 9>"$OUT/.build.lock"
    flock 9
    ensure_host_tools

    local started=$SECONDS
    WORK=$OUT/work-$hash
    local work=$WORK
    rm -rf "$work" "$dest.partial"
    mkdir -p "$work" "$dest.partial"
    trap 'unmount_chroot "$WORK/root"' EXIT

    make_rootfs "$work/root" "$OUT/cache"
    local kver
    kver=$(kernel_version "$work/root")
    cp "$work/root/boot/vmlinuz-$kver" "$dest.partial/bzImage"
    make_initramfs "$work/root" "$kver" "$dest.partial/initrd.img"
    unmount_chroot "$work/root"
    slim_rootfs "$work/root" "$kver"

    cp /usr/share/seabios/bios.bin "$dest.partial/bios.bin"
    cp /usr/share/seabios/vgabios-stdvga.bin "$dest.partial/vgabios.bin"

    log "making the ext4 disk (${DISK_MIB} MiB)"
    make_disk "$work/root" "$work/disk.img" "$hash"

    # The first start of every user wakes this state instead of cold booting (~1 s, not ~30 s).
    log "booting it once to save the pristine post-boot state"
    local tsx=$HERE/../node_modules/.bin/tsx
    [[ -x $tsx ]] || die "node_modules is missing: run npm ci first (the state is saved by the app's own vm/ code)"
    (cd "$HERE/.." && "$tsx" vm-images/lib/prestate.ts "$dest.partial" "$work/disk.img" "$work/state.bin" "$MEMORY_MIB" "$CMDLINE" \
        "$work/wake-set.json" $((CHUNK_KIB * 1024)) "$work/bootstate.bin") \
        || die "the pristine boot failed; see the lines above"

    log "packing chunks and manifest"
    cat >"$work/meta.json" <<EOF
{"recipeHash": "$hash", "suite": "$SUITE", "arch": "$ARCH", "kernelVersion": "$kver",
 "securityUpdates": $SECURITY_UPDATES, "cmdline": "$CMDLINE",
 "chunkSize": $((CHUNK_KIB * 1024)), "memoryMiB": $MEMORY_MIB}
EOF
    node "$HERE/lib/pack-image.mjs" "$dest.partial" "$work/disk.img" "$work/meta.json" "$work/state.bin" "$work/wake-set.json" \
        "$work/bootstate.bin"

    rm -rf "$dest"
    mv "$dest.partial" "$dest"
    ln -sfn "$hash" "$OUT/latest"
    # Under sudo, hand the outputs to the user who asked for them.
    [[ -z ${SUDO_UID:-} ]] || chown -h -R "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$dest" "$OUT/latest"
    [[ ${STACKDOCS_KEEP_WORK:-0} == 1 ]] || rm -rf "$work"
    log "built $dest in $((SECONDS - started)) s"
}

make_disk() {
    local root=$1 img=$2 hash=$3
    rm -f "$img"
    # Fixed UUID and hash seed (from the recipe hash) keep the image reproducible; inode tables
    # are written now so the guest kernel never zeroes them lazily into the user's disk.
    local uuid="${hash:0:8}-${hash:8:4}-4${hash:13:3}-8${hash:1:3}-${hash:4:12}"
    E2FSPROGS_FAKE_TIME=${SOURCE_DATE_EPOCH:-1700000000} mke2fs -q -F -t ext4 -b 4096 -m 0 \
        -L stackdocs -U "$uuid" -E "lazy_itable_init=0,lazy_journal_init=0,hash_seed=$uuid" \
        -d "$root" "$img" "${DISK_MIB}M"
    e2fsck -fn "$img" >/dev/null || die "e2fsck found errors in the new disk"
}

main "$@"
