import { useEffect, useRef, useState } from 'preact/hooks';

// A checkpoint's name and kind, asked inline on a sandbox's row (docs/api.md
// POST …/checkpoints: `disk`, or `full` with memory and devices, which a
// fork can start from). Escape or Cancel closes it.
export function CheckpointForm({ id, onSave, onCancel }) {
  const [name, setName] = useState('');
  const [kind, setKind] = useState('disk');
  const input = useRef(null);
  useEffect(() => input.current.focus(), []);
  const submit = (e) => {
    e.preventDefault();
    onSave({ name: name.trim(), kind });
  };
  return (
    <form class="checkpoint-form" onSubmit={submit}
          onKeyDown={(e) => e.key === 'Escape' && onCancel()}>
      <input aria-label={'Checkpoint name for ' + id} placeholder="name" value={name} ref={input}
             onInput={(e) => setName(e.currentTarget.value)} />
      <select aria-label={'Checkpoint kind for ' + id} value={kind}
              onChange={(e) => setKind(e.currentTarget.value)}>
        <option value="disk">disk</option>
        <option value="full">full (memory too)</option>
      </select>
      <button type="submit" aria-label={'Save checkpoint of ' + id}>Save</button>
      <button type="button" onClick={onCancel}>Cancel</button>
    </form>
  );
}
