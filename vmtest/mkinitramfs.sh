#!/usr/bin/env bash
# vmtest/mkinitramfs.sh KERNEL_DIR OUT SUITE...: build the vmtest guest's initramfs (cpio newc,
# gzip) into OUT. It holds:
#   - busybox (applets under /usr/lib/vmtest/bb, last on PATH) and the host programs of
#     tools.list with their shared libraries, at their host paths (merged-/usr layout);
#   - the kernel modules of modules.list and their dependencies, plus the list of them in
#     load order (/etc/vmtest/modules) for /init to insmod;
#   - the repo's build/ and tests/ trees at /ubxdp (not at the host path: a clone under
#     /tmp or /run would vanish under the guest's tmpfs mounts; the tests use relative
#     paths), and the libraries build/ binaries link to;
#   - /init (vmtest/init) and /etc/vmtest/config, which tells it what to run.
# Suite "selftest" is vmtest's own smoke test (vmtest/selftest), put at tests/selftest in
# the guest's copy of the repo.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
grepo=/ubxdp	# the repo's place in the guest
kdir=${1:?usage: mkinitramfs.sh KERNEL_DIR OUT SUITE...}
out=${2:?usage: mkinitramfs.sh KERNEL_DIR OUT SUITE...}
shift 2
suites=("$@")
kver=$(basename "$kdir")
kver=${kver#kernel-}
kmod=$kdir/lib/modules/$kver

note() { echo "vmtest: $*" >&2; }
die() { echo "vmtest: $*" >&2; exit 1; }

S=$(mktemp -d)
trap 'rm -rf "$S"' EXIT

# Merged-/usr skeleton like the host's, so that every host path (/lib64/ld-linux..., /bin/x,
# /usr/sbin/y) resolves the same way inside.
mkdir -p "$S"/usr/{bin,sbin,lib,lib64} "$S"/{proc,sys,dev,run,tmp,root,etc/vmtest,mnt,var}
for d in bin sbin lib lib64; do ln -s "usr/$d" "$S/$d"; done
ln -s ../run "$S/var/run"
chmod 1777 "$S/tmp"

# libs_of FILE: the shared libraries FILE loads, one path a line (none for a static binary
# or a script). This is what ldd does, without its shell script: 10x faster. --verify
# first (0: dynamic executable, 2: shared object), as --list on a static-pie crashes.
ldso=/lib64/ld-linux-x86-64.so.2
[[ -x $ldso ]] || die "$ldso not found (vmtest supports x86_64 hosts only)"
libs_of() {
	local out rc line
	"$ldso" --verify "$1" >/dev/null 2>&1
	rc=$?
	[[ $rc -eq 0 || $rc -eq 2 ]] || return 0
	out=$("$ldso" --list "$1" 2>&1) || die "$1: $out"
	[[ $out == *"not found"* ]] && die "$1: shared libraries not found on the host: $out"
	while read -r line; do   # "libx.so.1 => /path (0x...)" or "/lib64/ld-... (0x...)"
		[[ $line =~ (^|=\>\ )(/[^ ]+) ]] && echo "${BASH_REMATCH[2]}"
	done <<<"$out"
}

# copy_elf FILE DEST: copy FILE (following symlinks) to DEST inside the image, and its
# shared libraries to their own paths inside. (Few forks a file: they are slow here.)
copy_elf() {
	local file=$1 dest=$2 lib libs
	[[ -d $S${dest%/*} ]] || mkdir -p "$S${dest%/*}"
	[[ -e $S$dest ]] || cp -L "$file" "$S$dest"
	libs=$(libs_of "$file") || exit 1
	for lib in $libs; do
		[[ -e $S$lib ]] && continue
		[[ -d $S${lib%/*} ]] || mkdir -p "$S${lib%/*}"
		cp -L "$lib" "$S$lib"
	done
}

# --- busybox: /init's shell and the fallback for every command the host list lacks.
bb=$(command -v busybox) || die "busybox not found (apt-get install busybox-static)"
copy_elf "$bb" /usr/lib/vmtest/busybox
# Its applet links are made by /init in the guest (busybox --install): 400 ln here cost seconds.
mkdir -p "$S/usr/lib/vmtest/bb"
ln -s ../lib/vmtest/busybox "$S/usr/bin/busybox"
# modprobe for tests and the kernel's autoloading (of the modules copied below).
ln -sf ../lib/vmtest/busybox "$S/usr/sbin/modprobe"

# --- host programs
while read -r name flag; do
	[[ -z $name || $name == \#* ]] && continue
	# Profiling tools cost every run's boot (perf adds 11 MiB): only on request.
	[[ $flag == profile && -z ${VMTEST_PERF:-} ]] && continue
	if path=$(command -v "$name") && [[ $path == /* ]]; then
		copy_elf "$path" "$path"
	elif [[ $flag == required ]]; then
		die "required program '$name' not found on the host (see vmtest/tools.list)"
	fi
done <"$here/tools.list"

# libibverbs dlopen()s its providers (ldd does not see them): Soft-RoCE's, with the
# .driver file that names it, when the host has them (ibverbs-providers); Soft-iWARP's too.
for f in /etc/libibverbs.d/{rxe,siw}.driver /usr/lib/x86_64-linux-gnu/libibverbs/lib{rxe,siw}-rdmav*.so; do
	[[ -e $f ]] || continue
	case $f in
	*.so) copy_elf "$f" "$f" ;;
	*) mkdir -p "$S${f%/*}" && cp "$f" "$S$f" ;;
	esac
done

# Data files some of them read: tc's netem delay distributions, iproute2 name tables.
for d in /usr/lib/x86_64-linux-gnu/tc /etc/iproute2 /usr/share/iproute2; do
	[[ -d $d ]] && mkdir -p "$S$(dirname "$d")" && cp -a "$d" "$S$d"
done
for f in /etc/protocols /etc/services /etc/ethertypes; do
	[[ -f $f ]] && cp "$f" "$S$f"
done
# nobody/nogroup: tests drop privileges with setpriv to check refusals.
printf '%s\n' 'root:x:0:0:root:/root:/bin/bash' 'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin' >"$S/etc/passwd"
printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' >"$S/etc/group"
printf '%s\n' 'passwd: files' 'group: files' 'hosts: files' >"$S/etc/nsswitch.conf"
printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n' >"$S/etc/hosts"

# --- kernel modules: resolve dependencies from modules.dep, emit them in load order
# (dependencies first). Module names match file names with '-' and '_' interchangeable.
[[ -f $kmod/modules.dep ]] || die "$kmod/modules.dep missing (broken kernel cache? remove it)"
wanted=$(sed -e 's/#.*//' "$here/modules.list" | tr -s ' \t' '\n' | sed '/^$/d')
order=$(awk -v wanted="$wanted" '
	function key(path,   n) { n = path; sub(/.*\//, "", n); sub(/\.ko(\.[a-z]+)?$/, "", n); gsub(/-/, "_", n); return n }
	FNR == NR { sub(/:$/, "", $1); deps[key($1)] = $0; file[key($1)] = $1; next }   # modules.dep
	{ builtin[key($0)] = 1 }                                                        # modules.builtin
	function visit(m,   n, i, f) {
		if (m in done) return
		done[m] = 1
		n = split(deps[m], f, /[: ]+/)
		for (i = 2; i <= n; i++) if (f[i] != "") visit(key(f[i]))
		print file[m]
	}
	END {
		n = split(wanted, w, "\n")
		for (i = 1; i <= n; i++) {
			m = w[i]; gsub(/-/, "_", m)
			if (m in file) visit(m)
			else if (!(m in builtin)) print "MISSING " w[i]
		}
	}' "$kmod/modules.dep" "$kmod/modules.builtin")
: >"$S/etc/vmtest/modules"
while read -r rel; do
	[[ -z $rel ]] && continue
	if [[ $rel == "MISSING "* ]]; then
		note "module ${rel#MISSING } is not in kernel $kver, skipped"
		continue
	fi
	mkdir -p "$S/lib/modules/$kver/$(dirname "$rel")"
	case $rel in   # busybox insmod may lack decompression: store modules plain
	*.ko.xz) xz -dc "$kmod/$rel" >"$S/lib/modules/$kver/${rel%.xz}"; rel=${rel%.xz} ;;
	*.ko.zst) zstd -qdc "$kmod/$rel" >"$S/lib/modules/$kver/${rel%.zst}"; rel=${rel%.zst} ;;
	*.ko.gz) gzip -dc "$kmod/$rel" >"$S/lib/modules/$kver/${rel%.gz}"; rel=${rel%.gz} ;;
	*) cp "$kmod/$rel" "$S/lib/modules/$kver/$rel" ;;
	esac
	echo "$rel" >>"$S/etc/vmtest/modules"
done <<<"$order"
# modules.dep for /sbin/modprobe: the copied modules only, with plain .ko names.
sed -E 's/\.ko\.(xz|zst|gz)/.ko/g' "$kmod/modules.dep" |
	grep -F -f <(sed 's/$/:/' "$S/etc/vmtest/modules") >"$S/lib/modules/$kver/modules.dep" || true
# Soft-iWARP, built out of tree by vmtest/siw.sh (Debian's 6.1 has no CONFIG_RDMA_SIW) for
# bench/rxe_vs_ubperf.sh: loaded last, after ib_core and libcrc32c (modules.list).
if [[ -s $kdir/extra/siw.ko ]]; then
	mkdir -p "$S/lib/modules/$kver/extra"
	cp "$kdir/extra/siw.ko" "$S/lib/modules/$kver/extra/siw.ko"
	echo extra/siw.ko >>"$S/etc/vmtest/modules"
	echo "extra/siw.ko: kernel/drivers/infiniband/core/ib_core.ko kernel/lib/libcrc32c.ko" \
		>>"$S/lib/modules/$kver/modules.dep"
fi
cp "$kmod/modules.builtin" "$kmod/modules.alias" "$S/lib/modules/$kver/" 2>/dev/null || true

# --- the repo: build/ (less vmtest's own cache and liburma's PIC objects) and tests/, at $grepo.
mkdir -p "$S$grepo"
trees=()
for t in build tests; do [[ -d $repo/$t ]] && trees+=("$t"); done
[[ -d $repo/build ]] || note "no build/ in $repo: run make first (the guest gets tests/ only)"
tar -C "$repo" --exclude=./build/vmtest --exclude=./build/pic -cf - "${trees[@]/#/./}" | tar -C "$S$grepo" -xf -
# Shared libraries of the project's programs (libbpf, libelf, zlib, libisal, libcmocka, ...).
if [[ -d $repo/build ]]; then
	while read -r f; do
		[[ $(head -c4 "$f" | od -An -c | tr -d ' ') == 177ELF ]] && copy_elf "$f" "$f"
	done < <(find "$repo/build" \( -path "$repo/build/vmtest" -o -path "$repo/build/pic" \) -prune -o \
		-type f \( -perm -u+x -o -name '*.so*' \) -print)
fi

for s in "${suites[@]}"; do
	[[ $s == selftest ]] || continue
	[[ -e $repo/tests/selftest ]] && die "tests/selftest exists in the repo; vmtest's selftest would shadow it"
	cp -a "$here/selftest" "$S$grepo/tests/selftest"
	# Trivial BPF programs for the attach tests; without clang those tests skip.
	if command -v clang >/dev/null; then
		for p in xdp_pass tc_pass; do
			clang -O2 -g -target bpf -I"/usr/include/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)" \
				-c "$here/selftest/$p.bpf.c" -o "$S$grepo/tests/selftest/$p.bpf.o"
		done
	fi
done

# A command in place of the suites (VMTEST_CMD, as make bench's guest part uses): the
# repo's bench/ scripts come along.
if [[ -n ${VMTEST_CMD:-} ]]; then
	mkdir -p "$S$grepo/bench"
	cp "$repo"/bench/*.sh "$S$grepo/bench/"
fi

# --- /init and what it runs
cp "$here/init" "$S/init"
chmod 755 "$S/init"
{
	printf 'REPO=%q\n' "$grepo"
	printf 'SUITES=%q\n' "${suites[*]}"
	printf 'VMTEST_INJECT=%q\n' "${VMTEST_INJECT:-}"   # fault injection for vmtest's selftest
	printf 'CMD=%q\n' "${VMTEST_CMD:-}"   # run this (bash -c) instead of tests/run.sh SUITES
} >"$S/etc/vmtest/config"

# gzip -1: quick to make; the guest kernel unpacks it (15 MB) in about 1.5 s under TCG.
(cd "$S" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 >"$out"
