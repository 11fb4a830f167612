// The field a 400 names: the API's messages start with it
// ("bindings[1].host: …", "sandboxes: -5 is negative …"); null for others.
export function fieldNamed(error) {
  if (!error || error.status !== 400) return null;
  const m = error.message.match(/^([A-Za-z0-9_.[\]]+): /);
  return m ? m[1] : null;
}
