import type { ComponentChildren } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";

interface Props<T> {
  items: readonly T[];
  rowHeight: number;
  height: number | string;
  render(item: T, index: number): ComponentChildren;
  /** Keep the view at the bottom while new items arrive, unless the user scrolled up. */
  follow?: boolean;
  /** Scroll so this index is visible. */
  scrollTo?: number | null;
}

/**
 * A list that renders only the rows in view (plus a margin): a run of 10,000 events costs a
 * few dozen DOM rows. Rows have one fixed height.
 */
export function VirtualList<T>({ items, rowHeight, height, render, follow, scrollTo }: Props<T>) {
  const box = useRef<HTMLDivElement>(null);
  const [top, setTop] = useState(0);
  const [viewport, setViewport] = useState(400);
  const pinned = useRef(true);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setViewport(element.clientHeight));
    observer.observe(element);
    setViewport(element.clientHeight);
    return () => observer.disconnect();
  }, []);

  useLayoutEffect(() => {
    const element = box.current;
    if (element && follow && pinned.current) {
      element.scrollTop = element.scrollHeight;
      setTop(element.scrollTop);
    }
  }, [items.length, follow]);

  useLayoutEffect(() => {
    const element = box.current;
    if (!element || scrollTo === null || scrollTo === undefined) return;
    const rowTop = scrollTo * rowHeight;
    if (
      rowTop < element.scrollTop ||
      rowTop + rowHeight > element.scrollTop + element.clientHeight
    ) {
      element.scrollTop = rowTop - element.clientHeight / 2;
      setTop(element.scrollTop);
    }
  }, [scrollTo, rowHeight]);

  const onScroll = () => {
    const element = box.current!;
    setTop(element.scrollTop);
    pinned.current = element.scrollTop + element.clientHeight >= element.scrollHeight - rowHeight;
  };

  const margin = 10;
  const first = Math.max(0, Math.floor(top / rowHeight) - margin);
  const last = Math.min(items.length, Math.ceil((top + viewport) / rowHeight) + margin);
  const rows: ComponentChildren[] = [];
  for (let i = first; i < last; i++) {
    rows.push(
      <div
        key={i}
        class="vrow"
        style={{
          position: "absolute",
          top: `${i * rowHeight}px`,
          height: `${rowHeight}px`,
          left: 0,
          right: 0,
        }}
      >
        {render(items[i]!, i)}
      </div>,
    );
  }
  return (
    <div
      ref={box}
      class="vlist"
      style={{ height, overflowY: "auto", position: "relative" }}
      onScroll={onScroll}
    >
      <div style={{ height: `${items.length * rowHeight}px`, position: "relative" }}>{rows}</div>
    </div>
  );
}
