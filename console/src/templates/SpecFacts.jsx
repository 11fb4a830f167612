// A template's spec as GET /v1/templates/{name} shows it (file contents
// replaced by their sizes): each field it sets, in the spec's order.
export function SpecFacts({ spec }) {
  const env = Object.entries(spec.env || {});
  return (
    <dl class="facts spec-facts">
      {spec.packages && (
        <>
          <dt>Packages</dt>
          <dd>{spec.packages.join(' ')}</dd>
        </>
      )}
      {spec.files && (
        <>
          <dt>Files</dt>
          <dd>
            <ul class="plain">
              {spec.files.map((f) => (
                <li key={f.path}>
                  <code>{f.path}</code> {f.bytes} bytes{f.mode !== undefined && ', mode ' + f.mode}
                </li>
              ))}
            </ul>
          </dd>
        </>
      )}
      {spec.run && (
        <>
          <dt>Run</dt>
          <dd>
            <ol class="commands">
              {spec.run.map((cmd, i) => (
                <li key={i}>
                  <code>{cmd}</code>
                </li>
              ))}
            </ol>
          </dd>
        </>
      )}
      {env.length > 0 && (
        <>
          <dt>Environment</dt>
          <dd>
            <ul class="plain">
              {env.map(([name, value]) => (
                <li key={name}>
                  <code>
                    {name}={value}
                  </code>
                </li>
              ))}
            </ul>
          </dd>
        </>
      )}
      {spec.workdir && (
        <>
          <dt>Working directory</dt>
          <dd>
            <code>{spec.workdir}</code>
          </dd>
        </>
      )}
      {spec.start_cmd && (
        <>
          <dt>Start command</dt>
          <dd>
            <code>{spec.start_cmd}</code>
          </dd>
        </>
      )}
      <dt>Warm pool</dt>
      <dd>{spec.warm_pool || 0} restored VMs kept ready</dd>
      <dt>Network of the build</dt>
      <dd>{spec.network ? <code>{JSON.stringify(spec.network)}</code> : 'none'}</dd>
    </dl>
  );
}
