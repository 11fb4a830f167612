import { NetworkChoice } from '../create/NetworkChoice.jsx';
import { FilesField } from './FilesField.jsx';

function Field({ id, label, children }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
    </div>
  );
}

// The spec's common fields as form controls (fields: spec.js EMPTY_FIELDS).
export function SpecForm({ fields, onChange }) {
  const set = (field) => (value) => onChange({ ...fields, [field]: value });
  const text = (id, field, props = {}) => (
    <input id={id} value={fields[field]} {...props}
           onInput={(e) => set(field)(e.currentTarget.value)} />
  );
  const lines = (id, field, rows) => (
    <textarea id={id} rows={rows} value={fields[field]}
              onInput={(e) => set(field)(e.currentTarget.value)} />
  );
  return (
    <div class="spec-form">
      <div class="option-grid">
        <Field id="spec-name" label="Name">{text('spec-name', 'name', { placeholder: 'py-tools' })}</Field>
        <Field id="spec-workdir" label="Working directory">
          {text('spec-workdir', 'workdir', { placeholder: '/opt/app' })}
        </Field>
        <Field id="spec-cpus" label="vCPUs">
          {text('spec-cpus', 'cpus', { type: 'number', placeholder: '1' })}
        </Field>
        <Field id="spec-memory" label="Memory (MiB)">
          {text('spec-memory', 'memory_mb', { type: 'number', placeholder: '512' })}
        </Field>
        <Field id="spec-warm-pool" label="Warm pool (VMs kept ready)">
          {text('spec-warm-pool', 'warm_pool', { type: 'number', placeholder: '0' })}
        </Field>
      </div>
      <Field id="spec-packages" label="Debian packages (need the node's apt mirror)">
        {text('spec-packages', 'packages', { placeholder: 'jq python3-venv' })}
      </Field>
      <FilesField files={fields.files} onChange={set('files')} />
      <Field id="spec-run" label="Run commands (one per line, sh -c as root, in order)">
        {lines('spec-run', 'run', 4)}
      </Field>
      <Field id="spec-env" label="Environment (NAME=value per line)">{lines('spec-env', 'env', 2)}</Field>
      <Field id="spec-start" label="Start command (left running in every sandbox)">
        {text('spec-start', 'start_cmd')}
      </Field>
      <NetworkChoice legend="Network for the run commands" idPrefix="spec" value={fields.network}
                     onChange={set('network')} />
    </div>
  );
}
