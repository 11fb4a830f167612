/* The host's TSC frequency, passed to the guest as tsc_early_khz=: without
 * it about one TCG boot in ten hangs calibrating against the PIT. */
#ifndef AIRLOCK_VM_TSC_H
#define AIRLOCK_VM_TSC_H

/* From /proc/cpuinfo text: "cpu MHz" x 1000 when the flags include
 * tsc_known_freq (otherwise "cpu MHz" is not the TSC rate); -1 if absent. */
long vm_tsc_khz_from_cpuinfo(const char *cpuinfo);

/* From kernel log text: the last "tsc: Refined TSC clocksource calibration:
 * N MHz" or else "tsc: Detected N MHz processor"; -1 if absent. */
long vm_tsc_khz_from_dmesg(const char *dmesg);

/* The host's TSC kHz (cpuinfo, then dmesg), looked up once per process;
 * -1 after logging one warning when neither source knows it. */
long vm_host_tsc_khz(void);

#endif
