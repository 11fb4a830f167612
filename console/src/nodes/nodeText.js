// A node of GET /v1/nodes (docs/api.md "Nodes") in short texts, shared by
// the table and the node's page.
import { mibText } from './sizes.js';

export function vcpusText({ capacity: c }) {
  return `${c.vcpus_committed} of ${c.vcpus_limit}`;
}

export function memoryText({ capacity: c }) {
  return `${mibText(c.memory_committed_mb)} of ${mibText(c.memory_limit_mb)}`;
}

// The control plane's sandboxes there by state: "2 running, 1 suspended".
export function sandboxesText({ sandboxes }) {
  const parts = Object.entries(sandboxes || {}).map(([state, n]) => `${n} ${state}`);
  return parts.length ? parts.join(', ') : 'none';
}

// Records the node holds of the sandboxes it may hold.
export function slotsText({ capacity: c }) {
  return `${c.sandbox_records} of ${c.sandbox_slots}`;
}
