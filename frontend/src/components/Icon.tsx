/** Transport icons as inline SVG (no icon font or emoji glyphs needed). */
const PATHS = {
  first: "M5 4h2v16H5zM20 4v16L9 12z",
  prev: "M18 4v16L6 12z",
  next: "M6 4v16l12-8z",
  last: "M17 4h2v16h-2zM4 4v16l11-8z",
  play: "M7 4v16l13-8z",
  pause: "M6 4h4v16H6zM14 4h4v16h-4z",
  step: "M5 4v16l10-8zM16 4h3v16h-3z",
} as const;

export function Icon({ name }: { name: keyof typeof PATHS }) {
  return (
    <svg className="icon" viewBox="0 0 24 24" width="12" height="12" aria-hidden="true" focusable="false">
      <path d={PATHS[name]} fill="currentColor" />
    </svg>
  );
}
