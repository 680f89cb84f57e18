export interface ShownError {
  id: number;
  title: string;
  message: string;
}

/** Errors from the server (HTTP status and its detail) or from a trace file, never swallowed. */
export function ErrorBanner({ errors, onDismiss }: { errors: ShownError[]; onDismiss: (id: number) => void }) {
  if (errors.length === 0) return null;
  return (
    <div className="error-stack" role="alert" data-testid="error-banner">
      {errors.map((e) => (
        <div key={e.id} className="error-item" data-testid="error-item">
          <strong>{e.title}</strong>
          <span className="error-message">{e.message}</span>
          <button type="button" className="ghost" aria-label="Dismiss error" onClick={() => onDismiss(e.id)}>✕</button>
        </div>
      ))}
    </div>
  );
}
