// Memory as the nodes' answers give it (MiB, or bytes for a warm pool),
// in the larger unit once it reaches one.
export function mibText(mib) {
  if (mib < 1024) return mib + ' MiB';
  return (mib / 1024).toFixed(1).replace(/\.0$/, '') + ' GiB';
}

export function bytesText(bytes) {
  return mibText(Math.round(bytes / 1048576));
}
