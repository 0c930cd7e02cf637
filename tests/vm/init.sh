#!/bin/busybox sh
# shellcheck shell=dash
# /init of the test VM's initramfs (busybox). Loads the modules listed in
# /etc/sotls-vm/modules, runs /etc/sotls-vm/cmd, prints its exit status as
# "SOTLS_VM_STATUS=<n>" for tests/vm/run.sh to read, and powers off.
/bin/busybox mkdir -p /proc /sys /dev /tmp /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
ip link set lo up
echo "SOTLS_VM_BOOTED uptime=$(cut -d' ' -f1 /proc/uptime) kernel=$(uname -r)"

status=0
# shellcheck disable=SC2013 # one line of module names
for m in $(cat /etc/sotls-vm/modules); do
	if ! modprobe "$m"; then
		echo "SOTLS_VM: modprobe $m failed"
		status=3
	fi
done
echo "SOTLS_VM_MODULES $(cut -d' ' -f1 /proc/modules | sort | tr '\n' ' ')"

if [ "$status" -eq 0 ]; then
	cd /tmp || true
	[ -f /etc/sotls-vm/env ] && . /etc/sotls-vm/env
	sh /etc/sotls-vm/cmd
	status=$?
fi
echo "SOTLS_VM_STATUS=$status uptime=$(cut -d' ' -f1 /proc/uptime)"
sync
poweroff -f
