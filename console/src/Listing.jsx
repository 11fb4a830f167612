// A table of what the API listed: "Loading…" until it comes (nothing when
// the page shows an error instead), `empty` when there is nothing, else a
// row per item (row(item) renders its <tr>) under the columns' headings
// and, with `actions`, a heading only screen readers hear for the buttons.
export function Listing({ items, error, empty, columns, actions, row, ...table }) {
  if (!items) return error ? null : <p>Loading…</p>;
  if (items.length === 0 && empty) return <p>{empty}</p>;
  return (
    <table {...table}>
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c}>{c}</th>
          ))}
          {actions && (
            <th>
              <span class="sr-only">Actions</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>{items.map(row)}</tbody>
    </table>
  );
}
