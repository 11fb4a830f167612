// The hosts a secret is bound to, one input each: a name or `*.name`
// (docs/vault.md); invalid names the one a 400 named ("host-1"). The API keeps one header rule per secret, so hosts are
// all this list holds; the header and format are the form's.
export function HostList({ prefix, invalid, hosts, onChange }) {
  const set = (i, host) => onChange(hosts.map((h, j) => (j === i ? host : h)));
  return (
    <fieldset class="hosts">
      <legend>Bound hosts</legend>
      {hosts.map((host, i) => (
        <div class="host" key={i}>
          <label for={prefix + 'host-' + i}>Host {i + 1}</label>
          <input id={prefix + 'host-' + i} value={host} required placeholder="api.example.com"
                 aria-invalid={invalid === 'host-' + i ? 'true' : undefined}
                 onInput={(e) => set(i, e.currentTarget.value)} />
          {hosts.length > 1 && (
            <button type="button" aria-label={'Remove host ' + (i + 1)}
                    onClick={() => onChange(hosts.filter((_, j) => j !== i))}>
              Remove
            </button>
          )}
        </div>
      ))}
      <button type="button" onClick={() => onChange([...hosts, ''])}>
        Add host
      </button>
    </fieldset>
  );
}
