# The initramfs: static busybox (busybox-static), the modules that reach the root disk, and
# initramfs/init.
# Sourced by build.sh.

# What v86's root disk needs: the PIIX IDE controller, SCSI disks, ext4 (with its checksum).
# Then the virtio devices rc.sysinit would load from the disk (console, 9p, network): loaded here,
# they are already there in the boot state (vm/machine.ts, captureBootState), which saves ~3 s of
# modprobe from each cold boot.
INITRAMFS_MODULES=(ata_piix ata_generic sd_mod ext4 crc32c_generic
    virtio_pci virtio_console 9pnet_virtio 9p virtio_net)

make_initramfs() {
    local root=$1 kver=$2 out=$3 dir module path
    dir=$(mktemp -d)
    log "making the initramfs"
    mkdir -p "$dir"/{bin,dev,etc,proc,sys,newroot,lib/modules}
    install -m 755 "$root/bin/busybox" "$dir/bin/busybox"
    mknod -m 600 "$dir/dev/console" c 5 1
    mknod -m 666 "$dir/dev/null" c 1 3
    install -m 755 "$HERE/initramfs/init" "$dir/init"

    # modprobe lists dependencies first; keep that order and load each module once.
    : >"$dir/etc/modules"
    while read -r path; do
        module=$(basename "$path")
        # The emulated CPU has no SSE4.2; crc32c-intel only fails to load and slows the boot.
        [[ $module == crc32c-intel.ko* ]] && continue
        grep -qx "$module" "$dir/etc/modules" && continue
        install -m 644 "$root$path" "$dir/lib/modules/$module"
        echo "$module" >>"$dir/etc/modules"
    done < <(chroot_run "$root" modprobe -a -S "$kver" --show-depends "${INITRAMFS_MODULES[@]}" \
        | awk '$1 == "insmod" {print $2}')
    [[ -s $dir/etc/modules ]] || die "no modules found for the initramfs"

    (cd "$dir" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 --reproducible \
        | gzip -9 -n) >"$out"
    log "initramfs: $(wc -l <"$dir/etc/modules") modules, $(du -h "$out" | cut -f1)"
    rm -rf "$dir"
}
