// Placeholder while this page is built (issue 20); replaced by its own.
export function Templates() {
  return <h2>Templates</h2>;
}
