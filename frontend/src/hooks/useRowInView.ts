import { type RefObject, useEffect } from "react";

/** Keep the current row of a scrolling table in view by scrolling the table's box itself,
 * never the page (whenever `key` changes). */
export function useRowInView(box: RefObject<HTMLElement | null>, row: RefObject<HTMLElement | null>, key: unknown): void {
  useEffect(() => {
    const current = row.current;
    const container = box.current;
    if (!current || !container) return;
    const header = container.querySelector("thead")?.clientHeight ?? 0;
    const top = current.getBoundingClientRect().top - container.getBoundingClientRect().top + container.scrollTop;
    if (top - header < container.scrollTop) container.scrollTop = top - header;
    else if (top + current.clientHeight > container.scrollTop + container.clientHeight) {
      container.scrollTop = top + current.clientHeight - container.clientHeight;
    }
  }, [box, row, key]);
}
