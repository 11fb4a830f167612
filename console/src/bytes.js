// The API's *_b64 fields (docs/api.md): bytes that need not be UTF-8, as a
// terminal's input and output are.
export function fromBase64(b64) {
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

export function toBase64(text) {
  let binary = '';
  for (const b of new TextEncoder().encode(text)) binary += String.fromCharCode(b);
  return btoa(binary);
}
