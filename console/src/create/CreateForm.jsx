import { useState } from 'preact/hooks';
import { useLoad } from '../load.js';
import { ErrorLine } from '../ErrorLine.jsx';
import { NetworkChoice, NO_NETWORK, policyOf } from './NetworkChoice.jsx';
import { keyValues, numberOrAbsent, withoutAbsent } from './fields.js';
import './create.css';

const EMPTY_OPTIONS = {
  cpus: '',
  memory_mb: '',
  idle_timeout_s: '',
  ttl_s: '',
  checkpoint_every_s: '',
  env: '',
  public_ports: false,
  network: NO_NETWORK,
};

// The body of POST /v1/sandboxes from what the form holds; empty fields
// are left out so that the API's defaults (and a template's size) apply.
function createBody(template, o) {
  return withoutAbsent({
    template: template.trim() || 'default',
    cpus: numberOrAbsent(o.cpus),
    memory_mb: numberOrAbsent(o.memory_mb),
    idle_timeout_s: numberOrAbsent(o.idle_timeout_s),
    ttl_s: numberOrAbsent(o.ttl_s),
    checkpoint_every_s: numberOrAbsent(o.checkpoint_every_s),
    env: keyValues(o.env),
    public_ports: o.public_ports || undefined,
    network: policyOf(o.network),
  });
}

// Template choices: `default`, then each of the project's templates by
// name (its newest version) and by every version (name:N).
function templateChoices(templates) {
  const names = [...new Set(templates.map((t) => t.name))];
  return ['default', ...names, ...templates.map((t) => t.ref)];
}

// The version a typed name or name:N stands for (a name: its newest, the
// list's last); undefined for `default` and names the list lacks.
function versionNamed(templates, typed) {
  const t = typed.trim();
  return templates.filter((x) => x.name === t || x.ref === t).pop();
}

function NumberField({ id, label, hint, value, onInput }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} type="number" inputmode="numeric" value={value} placeholder={hint}
             onInput={(e) => onInput(e.currentTarget.value)} />
    </div>
  );
}

// Create sandbox: a template (the project's offered from GET
// /v1/templates) and, behind "More options", size, egress policy,
// lifetimes, environment and public ports. onCreate(body) makes the call
// and shows its errors; the button is disabled while it runs.
export function CreateForm({ onCreate, onKeyRefused }) {
  const list = useLoad('/v1/templates', onKeyRefused);
  const templates = list.data ? list.data.templates : [];
  const [template, setTemplate] = useState('default');
  const [options, setOptions] = useState(EMPTY_OPTIONS);
  const [creating, setCreating] = useState(false);
  const set = (field) => (value) => setOptions((o) => ({ ...o, [field]: value }));
  const chosen = versionNamed(templates, template);

  async function submit(e) {
    e.preventDefault();
    setCreating(true);
    await onCreate(createBody(template, options));
    setCreating(false);
  }

  return (
    <form class="create-sandbox" onSubmit={submit}>
      <div class="create-line">
        <label for="template">Template</label>
        <input id="template" list="template-choices" value={template} autocomplete="off"
               aria-describedby={chosen ? 'template-hint' : undefined}
               onInput={(e) => setTemplate(e.currentTarget.value)} />
        <datalist id="template-choices">
          {templateChoices(templates).map((name) => (
            <option key={name} value={name} />
          ))}
        </datalist>
        <button type="submit" disabled={creating}>
          {creating ? 'Creating…' : 'Create sandbox'}
        </button>
      </div>
      {chosen && (
        // Its sandboxes have its size: a create naming another is a 400.
        <p class="hint" id="template-hint">
          {chosen.ref}: {chosen.cpus} vCPU, {chosen.memory_mb} MiB, the size of its sandboxes
        </p>
      )}
      <ErrorLine error={list.error} />
      <details class="more-options">
        <summary>More options</summary>
        <div class="option-grid">
          <NumberField id="create-cpus" label="vCPUs" hint="1–16" value={options.cpus}
                       onInput={set('cpus')} />
          <NumberField id="create-memory" label="Memory (MiB)" hint="128–65536"
                       value={options.memory_mb} onInput={set('memory_mb')} />
          <NumberField id="create-idle" label="Idle timeout (s)" hint="scheduler's default"
                       value={options.idle_timeout_s} onInput={set('idle_timeout_s')} />
          <NumberField id="create-ttl" label="Lifetime, TTL (s)" hint="scheduler's default"
                       value={options.ttl_s} onInput={set('ttl_s')} />
          <NumberField id="create-every" label="Checkpoint every (s)" hint="never"
                       value={options.checkpoint_every_s} onInput={set('checkpoint_every_s')} />
        </div>
        <p class="hint">
          Empty: the default (size 1 vCPU, 512 MiB, or the template's). Idle: suspended after
          this long without activity; TTL: deleted this long after creation.
        </p>
        <NetworkChoice legend="Network (egress policy)" idPrefix="create" value={options.network}
                       onChange={set('network')} />
        <div class="field wide">
          <label for="create-env">Environment (NAME=value per line)</label>
          <textarea id="create-env" rows="3" value={options.env}
                    onInput={(e) => set('env')(e.currentTarget.value)} />
        </div>
        <label class="choice">
          <input type="checkbox" checked={options.public_ports}
                 onChange={(e) => set('public_ports')(e.currentTarget.checked)} />
          Public ports (its ports answer anyone through the gateway)
        </label>
      </details>
    </form>
  );
}
