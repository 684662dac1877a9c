# The guest root tree: debootstrap, packages, the project's files, slimming. Sourced by build.sh.

# Runs a command inside the tree with a clean environment. INITRD=No stops the kernel package
# from generating Debian's own initramfs, which the image does not use.
chroot_run() {
    local root=$1; shift
    chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive INITRD=No "$@"
}

mount_chroot() {
    local root=$1 cache=$2
    mkdir -p "$cache/apt-archives/partial"
    mount -t proc proc "$root/proc"
    mount --bind "$cache/apt-archives" "$root/var/cache/apt/archives"
}

# Must not fail: it runs from the EXIT trap too.
unmount_chroot() {
    local root=$1 m
    for m in "$root/var/cache/apt/archives" "$root/proc"; do
        mountpoint -q "$m" 2>/dev/null && umount -l "$m"
    done
    return 0
}

# Copies a folder of the checkout into the tree as root-owned files, leaving the modes and owners
# of directories that already exist in the tree alone.
copy_tree() {
    mkdir -p "$2"
    tar -C "$1" --owner=0 --group=0 -cf - . | tar -C "$2" --no-overwrite-dir -xpf -
}

SECURITY_UPDATES=true

# The guest's apt sources: the build's mirrors, so `apt-get` in the guest works the same way.
write_sources() {
    local root=$1 mirror=$2 security=$3 keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    {
        printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\n' "$mirror" "$SUITE" "$SUITE"
        printf 'Components: main\nSigned-By: %s\n' "$keyring"
        if [[ -n $security ]]; then
            printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\n' "$security" "$SUITE"
            printf 'Components: main\nSigned-By: %s\n' "$keyring"
        fi
    } >"$root/etc/apt/sources.list.d/debian.sources"
}

guest_packages() {
    sed -e 's/#.*//' "$HERE/packages.txt" | awk 'NF {print $1}'
}

make_rootfs() {
    local root=$1 cache=$2 mirror security
    mirror=$(debian_mirror)
    security=$(debian_security_mirror)
    mkdir -p "$cache/debootstrap"
    log "debootstrap $SUITE/$ARCH minbase from $mirror"
    debootstrap --arch="$ARCH" --variant=minbase --cache-dir="$cache/debootstrap" \
        "$SUITE" "$root" "$mirror" >"$root.debootstrap.log" 2>&1 \
        || { tail -n 30 "$root.debootstrap.log" >&2; die "debootstrap failed"; }

    rm -f "$root/etc/apt/sources.list"
    write_sources "$root" "$mirror" "$security"
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod 755 "$root/usr/sbin/policy-rc.d"
    # Slim future installs too: the guest keeps no docs, man pages or translations.
    copy_tree "$HERE/rootfs/etc/dpkg" "$root/etc/dpkg"

    mount_chroot "$root" "$cache"
    local packages
    mapfile -t packages < <(guest_packages)
    log "installing ${#packages[@]} packages and their dependencies"
    if ! chroot_run "$root" apt-get update >"$root.apt.log" 2>&1; then
        grep -q "$security" "$root.apt.log" && grep -q '^E:' "$root.apt.log" \
            || { tail -n 30 "$root.apt.log" >&2; die "apt-get update failed in the guest tree"; }
        # Seen on a mirror whose security index for i386 did not match its Release file.
        log "WARNING: the security archive at $security is unusable for $ARCH;" \
            "building from $SUITE and $SUITE-updates only (recorded in the manifest)"
        SECURITY_UPDATES=false
        write_sources "$root" "$mirror" ""
        chroot_run "$root" apt-get update >"$root.apt.log" 2>&1 \
            || { tail -n 30 "$root.apt.log" >&2; die "apt-get update failed in the guest tree"; }
    fi
    chroot_run "$root" apt-get install -y --no-install-recommends \
        -o Dpkg::Options::=--force-confold "${packages[@]}" >>"$root.apt.log" 2>&1 \
        || { tail -n 30 "$root.apt.log" >&2; die "apt-get install failed in the guest tree"; }
    chroot_run "$root" apt-get clean
    rm -f "$root/usr/sbin/policy-rc.d"

    install_project_files "$root"
    # Build matplotlib's font cache now rather than on the user's first plot.
    chroot_run "$root" MPLBACKEND=Agg python3 -c 'import matplotlib.pyplot' \
        || die "matplotlib does not import in the guest tree"
    chroot_run "$root" python3 -m compileall -q /usr/lib/stackdocs/agent >/dev/null
}

kernel_version() {
    local root=$1 versions
    versions=$(ls "$root/lib/modules")
    [[ $(wc -w <<<"$versions") == 1 ]] || die "expected one kernel in the tree, found: $versions"
    echo "$versions"
}

install_project_files() {
    local root=$1
    [[ ! -e $root/usr/sbin/init ]] || die "the tree already has an /sbin/init; busybox init must own it"
    copy_tree "$HERE/rootfs" "$root"
    chmod 755 "$root"/usr/lib/stackdocs/{rc.sysinit,rc.shutdown,start-agent,root-shell}
    mkdir -p "$root/usr/lib/stackdocs/agent"
    install -m 644 "$HERE"/agent/*.py "$root/usr/lib/stackdocs/agent/"
    ln -s /bin/busybox "$root/usr/sbin/init"
    local applet
    for applet in poweroff reboot halt; do
        [[ -e $root/usr/sbin/$applet ]] || ln -s /bin/busybox "$root/usr/sbin/$applet"
    done
    echo stackdocs >"$root/etc/hostname"
    printf '127.0.0.1\tlocalhost\n127.0.1.1\tstackdocs\n::1\tlocalhost ip6-localhost ip6-loopback\n' \
        >"$root/etc/hosts"
    : >"$root/etc/resolv.conf"
    mkdir -p "$root/workspace"
}

# Kernel module trees a guest in v86 never needs (v86 emulates IDE, ne2k, virtio, PS/2, VGA).
UNNEEDED_MODULES=(
    drivers/{gpu,media,infiniband,staging,bluetooth,isdn,usb,hid,iio,mmc,nfc,hwmon,video,w1}
    drivers/{leds,mfd,power,thunderbolt,firewire,pcmcia,platform,mtd,spi,i2c,gnss,misc,target}
    drivers/{edac,crypto,atm,parport,ntb,comedi,watchdog,nvme}
    drivers/input/{joystick,touchscreen,misc}
    drivers/net/{wireless,usb,can,ieee802154,wwan}
    drivers/net/ethernet/{intel,broadcom,mellanox,qlogic,chelsio,marvell,realtek,sfc,amd,atheros}
    drivers/net/ethernet/{cavium,emulex,huawei,neterion,netronome,qualcomm,solarflare,ti,dec,3com}
    drivers/scsi/{qla2xxx,lpfc,mpt3sas,megaraid,bfa,be2iscsi,fnic,csiostor,qedi,qedf,aic7xxx}
    drivers/scsi/{aic94xx,pm8001,smartpqi,ibmvscsi,arcmsr,mpi3mr,elx}
    fs/{ocfs2,gfs2,dlm,nfsd,f2fs}
    sound net/{bluetooth,wireless,mac80211,mac802154,nfc,ieee802154,can}
)

slim_rootfs() {
    local root=$1 kver=$2 mod=$1/lib/modules/$2/kernel dir
    log "slimming the tree (from $(du -xsh "$root" | cut -f1))"
    for dir in "${UNNEEDED_MODULES[@]}"; do rm -rf "${mod:?}/$dir"; done
    chroot_run "$root" depmod -a "$kver"
    rm -rf "$root"/boot/* "$root"/usr/share/{doc,man,info,lintian,bug,reportbug}/* \
        "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
        "$root"/var/cache/debconf/*-old "$root"/var/lib/dpkg/*-old "$root"/tmp/* "$root"/root/.wget-hsts
    find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
    find "$root/var/log" -type f -exec truncate -s 0 {} +
    # Test suites shipped inside the Python packages: large and never imported at run time.
    find "$root/usr/lib/python3/dist-packages" -depth -type d -name tests \
        -path '*/dist-packages/*/tests' -exec rm -rf {} +
    log "slimmed to $(du -xsh "$root" | cut -f1)"
}
