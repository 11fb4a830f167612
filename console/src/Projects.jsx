// Placeholder while this page is built (issue 20); replaced by its own.
export function Projects() {
  return <h2>Projects</h2>;
}
