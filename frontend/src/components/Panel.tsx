import type { ReactNode } from "react";

interface PanelProps {
  title: string;
  testId: string;
  badge?: ReactNode;
  actions?: ReactNode;
  className?: string;
  children: ReactNode;
}

/** A titled card; every panel of the Glass Box is one. */
export function Panel({ title, testId, badge, actions, className, children }: PanelProps) {
  return (
    <section className={`panel ${className ?? ""}`} data-testid={testId} aria-label={title}>
      <header className="panel-head">
        <h2>{title}</h2>
        {badge !== undefined && <span className="badge">{badge}</span>}
        <span className="spacer" />
        {actions}
      </header>
      <div className="panel-body">{children}</div>
    </section>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}
