// Numbers of the sandbox page made readable: sizes, modes, exits.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

// 512 B, 4.0 KiB, 1.5 MiB: bytes in the largest unit that keeps the
// number at least 1.
export function humanSize(bytes) {
  let n = bytes;
  let unit = 0;
  while (n >= 1024 && unit < UNITS.length - 1) {
    n /= 1024;
    unit++;
  }
  return unit === 0 ? `${n} B` : `${n.toFixed(1)} ${UNITS[unit]}`;
}

// Permission bits as ls shows them in octal: 0644, 1777.
export function octalMode(mode) {
  return mode.toString(8).padStart(4, '0');
}

// How a process ended, from its exit event or its entry in the list.
export function exitText({ exit_code, signal, timed_out }) {
  if (timed_out) return 'timed out';
  if (signal) return `killed by signal ${signal}`;
  return `exited with code ${exit_code}`;
}
