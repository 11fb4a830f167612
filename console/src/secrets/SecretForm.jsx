import { useEffect, useState } from 'preact/hooks';
import { call } from '../api.js';
import { ErrorLine } from '../ErrorLine.jsx';
import { fieldNamed } from './fieldNamed.js';
import { HostList } from './HostList.jsx';
import './warning.css';

const EMPTY = {
  name: '',
  value: '',
  scope: 'project',
  sandboxId: '',
  hosts: [''],
  header: 'Authorization',
  format: 'Bearer {secret}',
  perMinute: '',
  burst: '',
  plaintext: false,
  customerKey: '',
};

// The body of POST /v1/secrets (docs/api.md) from the form; an org's
// secret (org) has no scope, sandbox or customer key. Numbers go as typed
// so that the API, not the page, judges them.
function secretBody(f, org) {
  const body = {
    name: f.name.trim(),
    value: f.value,
    bindings: f.hosts.map((host) => ({
      host: host.trim(),
      header: f.header.trim(),
      format: f.format,
      ...(f.plaintext && { plaintext: true }),
    })),
  };
  if (f.perMinute !== '')
    body.rate_limit = { per_minute: Number(f.perMinute), ...(f.burst !== '' && { burst: Number(f.burst) }) };
  if (org) return body;
  body.scope = f.scope;
  if (f.scope === 'sandbox') body.sandbox_id = f.sandboxId.trim();
  if (f.customerKey.trim()) body.customer_key = f.customerKey.trim();
  return body;
}

// The body's names for the form's controls; bindings[i].host is host i.
const CONTROLS = {
  name: 'name',
  value: 'value',
  sandbox_id: 'sandboxId',
  customer_key: 'customerKey',
  'rate_limit.per_minute': 'perMinute',
  'rate_limit.burst': 'burst',
};

// The control a 400 names ("host-1", "header", …), to mark and focus it.
function invalidControl(error) {
  const field = fieldNamed(error);
  const binding = field && field.match(/^bindings\[(\d+)\]\.(host|header|format|plaintext)$/);
  if (binding) return binding[2] === 'host' ? 'host-' + binding[1] : binding[2];
  return CONTROLS[field] || null;
}

// Creates a secret at path (the project's, or an org's when org). The
// value and customer key leave the page's state once the API has them:
// the form is emptied after every create. A refusal keeps the form as
// typed and shows the API's message, which names the field.
export function SecretForm({ path, org, onCreated, onKeyRefused }) {
  const [form, setForm] = useState(EMPTY);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  // Two forms on the admin's page (the project's, an org's): ids apart.
  const prefix = org ? 'org-secret-' : 'secret-';
  const invalid = invalidControl(error);
  useEffect(() => {
    if (invalid) document.getElementById(prefix + invalid)?.focus();
  }, [error]);
  const field = (name) => ({
    id: prefix + name,
    'aria-invalid': invalid === name ? 'true' : undefined,
    value: form[name],
    onInput: (e) => setForm({ ...form, [name]: e.currentTarget.value }),
  });

  async function submit(e) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const secret = await call('POST', path, secretBody(form, org));
      setForm(EMPTY);
      onCreated(secret);
    } catch (err) {
      if (err.status === 401) onKeyRefused(err);
      else setError(err);
    }
    setBusy(false);
  }

  return (
    <form class="secret-form" onSubmit={submit} aria-label={org ? 'New org secret' : 'New secret'}>
      <label for={prefix + 'name'}>Name</label>
      <input {...field('name')} required placeholder="github" />
      <label for={prefix + 'value'}>Value</label>
      <input {...field('value')} type="password" autocomplete="new-password" required />
      {!org && (
        <>
          <label for={prefix + 'scope'}>Scope</label>
          <select {...field('scope')}>
            <option value="project">project</option>
            <option value="sandbox">one sandbox</option>
          </select>
          {form.scope === 'sandbox' && (
            <>
              <label for={prefix + 'sandboxId'}>Sandbox id</label>
              <input {...field('sandboxId')} required placeholder="sb_…" />
            </>
          )}
        </>
      )}
      <HostList prefix={prefix} invalid={invalid} hosts={form.hosts} onChange={(hosts) => setForm({ ...form, hosts })} />
      <label for={prefix + 'header'}>Header</label>
      <input {...field('header')} required />
      <label for={prefix + 'format'}>Format</label>
      <input {...field('format')} required aria-describedby={prefix + 'format-hint'} />
      <p class="hint" id={prefix + 'format-hint'}>
        <code>{'{secret}'}</code> exactly once: it is replaced by the value. One header and format for
        every host.
      </p>
      <label for={prefix + 'perMinute'}>Rate limit per minute</label>
      <input {...field('perMinute')} type="number" placeholder="none" />
      <label for={prefix + 'burst'}>Burst</label>
      <input {...field('burst')} type="number" placeholder="= per minute" />
      <label class="check">
        <input type="checkbox" id={prefix + 'plaintext'} checked={form.plaintext}
               onChange={(e) => setForm({ ...form, plaintext: e.currentTarget.checked })} />
        Also inject into plain HTTP
      </label>
      {form.plaintext && (
        <p class="warning" role="note">
          Unsafe: over plain HTTP the value crosses the network in clear. Only for an upstream
          without TLS.
        </p>
      )}
      {!org && (
        <>
          <label for={prefix + 'customerKey'}>Customer key (BYOK, optional)</label>
          <input {...field('customerKey')} type="password" autocomplete="off"
                 placeholder="64 hex digits" aria-describedby="secret-byok-hint" />
          <p class="hint" id="secret-byok-hint">
            The project's first secret with a customer key makes the project BYOK: every later
            create needs it, or the project unlocked.
          </p>
        </>
      )}
      <button type="submit" disabled={busy}>
        {busy ? 'Creating…' : 'Create secret'}
      </button>
      <ErrorLine error={error} />
    </form>
  );
}
