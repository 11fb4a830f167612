import { nameList } from './fields.js';
import './form.css';

// The common shapes of an egress policy (docs/api.md "Egress policy"):
// without one the API denies everything, so "none" sends no `network`.
const SHAPES = [
  { value: 'none', label: 'No network' },
  { value: 'all', label: 'Everything' },
  { value: 'only', label: 'Only these hosts' },
  { value: 'except', label: 'Everything but these hosts' },
];

export const NO_NETWORK = { shape: 'none', hosts: '' };

// The `network` field a choice stands for; undefined for none.
export function policyOf({ shape, hosts }) {
  if (shape === 'all') return { default: 'allow' };
  if (shape === 'only') return { default: 'deny', allow_domains: nameList(hosts) || [] };
  if (shape === 'except') return { default: 'allow', deny_domains: nameList(hosts) || [] };
  return undefined;
}

// A radio group of the shapes and, for the two that list hosts, the hosts
// (names or *.name, as egress matches them).
export function NetworkChoice({ legend, idPrefix, value, onChange }) {
  const listsHosts = value.shape === 'only' || value.shape === 'except';
  return (
    <fieldset class="network-choice">
      <legend>{legend}</legend>
      {SHAPES.map((s) => (
        <label key={s.value} class="choice">
          <input type="radio" name={idPrefix + '-network'} value={s.value}
                 checked={value.shape === s.value}
                 onChange={() => onChange({ ...value, shape: s.value })} />
          {s.label}
        </label>
      ))}
      {listsHosts && (
        <div class="field wide">
          <label for={idPrefix + '-hosts'}>Hosts</label>
          <input id={idPrefix + '-hosts'} value={value.hosts} placeholder="pypi.org, *.github.com"
                 onInput={(e) => onChange({ ...value, hosts: e.currentTarget.value })} />
        </div>
      )}
    </fieldset>
  );
}
