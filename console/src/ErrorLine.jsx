// An API error as the API says it (code and message), announced to screen
// readers; nothing when there is none.
export function ErrorLine({ error }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      <strong>{error.code || 'error'}</strong>: {error.message}
    </p>
  );
}
