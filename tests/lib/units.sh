# Helpers for tests that run a systemd unit's commands as systemd would, without
# systemd (tests/cli, tests/wps_egress). Source it.

# unit_line UNIT KEY UBCTL CONF INSTANCE: the unit's KEY= commands (one a line) as
# systemd would run them for INSTANCE, with /usr/bin/ubctl at UBCTL and its
# /etc/ubxdp/*/%i.conf at CONF.
unit_line() {
	sed -n "s/^$2=//p" "$1" | sed "s|/etc/ubxdp/[a-z0-9-]*/%[iI].conf|$4|; s|%[iI]|$5|g; s|/usr/bin/ubctl|$3|"
}

# unit_caps UNIT: its CapabilityBoundingSet as setpriv's list (+bpf,+net_admin...).
unit_caps() {
	sed -n 's/^CapabilityBoundingSet=//p' "$1" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g'
}

# as_unit NS CAPS CMD...: CMD in NS as systemd runs a unit's command on a host: the
# namespace's own sysfs on /sys, the host's bpffs on /sys/fs/bpf, root with only CAPS
# (unit_caps) in its bounding set, nothing inheritable or ambient. as_unit_cmd sets
# AS_UNIT to that command line instead (one process, to run in the background).
as_unit_cmd() {
	local ns=$1 caps=$2; shift 2
	AS_UNIT=(nsenter --net="/run/netns/$ns" unshare -m --propagation private bash -c '
		set -e
		mkdir -p /run/ubxdp-test-bpf
		mount --bind /sys/fs/bpf /run/ubxdp-test-bpf
		mount -t sysfs sysfs /sys
		mount --move /run/ubxdp-test-bpf /sys/fs/bpf
		caps=$1; shift
		exec setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all,"$caps" -- "$@"' bash "$caps" "$@")
}
as_unit() {
	as_unit_cmd "$@"
	"${AS_UNIT[@]}"
}
