// A tab list as WAI-ARIA's tabs pattern has it: only the selected tab is
// in the Tab order; Left/Right (wrapping), Home and End move between tabs
// and select them. Panels carry id `panel-{id}`, labelled by `tab-{id}`.
export function Tabs({ tabs, selected, onSelect, label }) {
  function onKeyDown(e) {
    const at = tabs.findIndex((t) => t.id === selected);
    const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    const next = tabs[(to + tabs.length) % tabs.length];
    onSelect(next.id);
    document.getElementById('tab-' + next.id).focus();
  }
  return (
    <div role="tablist" aria-label={label} class="tabs" onKeyDown={onKeyDown}>
      {tabs.map((t) => (
        <button type="button" role="tab" key={t.id} id={'tab-' + t.id}
                aria-selected={t.id === selected} aria-controls={'panel-' + t.id}
                tabindex={t.id === selected ? 0 : -1} onClick={() => onSelect(t.id)}>
          {t.title}
        </button>
      ))}
    </div>
  );
}

// A tab's panel; hidden rather than removed when another tab is selected,
// so what it holds (a terminal's shell, a directory) stays.
export function TabPanel({ id, selected, children }) {
  return (
    <section role="tabpanel" id={'panel-' + id} aria-labelledby={'tab-' + id}
             hidden={id !== selected} tabindex="0" class="panel">
      {children}
    </section>
  );
}
