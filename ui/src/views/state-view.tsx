import { useState } from "preact/hooks";
import { Empty } from "../components/common";
import { JsonView } from "../components/json-view";
import type { StateVersion } from "../lib/run-session";

/**
 * The run's state (ACP values) after each update, newest first by default, with what that
 * update changed highlighted. Step back through the versions to see how it got there.
 */
export function StateView({ versions }: { versions: StateVersion[] }) {
  const [picked, setPicked] = useState<number | null>(null);
  if (versions.length === 0) return <Empty>No state yet.</Empty>;
  const index = picked === null ? versions.length - 1 : Math.min(picked, versions.length - 1);
  const version = versions[index]!;
  // A frame that changed nothing (messages only, or the final frame) shows the last change.
  let changedAt = index;
  while (changedAt > 0 && versions[changedAt]!.changed.size === 0) changedAt--;
  const source = versions[changedAt]!;
  const changed = [...source.changed].filter((p) => !isAncestor(p, source.changed));
  return (
    <div class="state-view" data-testid="state-view">
      <div class="row between wrap">
        <div class="row">
          <button
            type="button"
            class="button small"
            disabled={index === 0}
            onClick={() => setPicked(index - 1)}
          >
            ◂
          </button>
          <span class="small">
            version {index + 1} of {versions.length} · frame #{version.seq}
          </span>
          <button
            type="button"
            class="button small"
            disabled={index === versions.length - 1}
            onClick={() => setPicked(index + 1 === versions.length - 1 ? null : index + 1)}
          >
            ▸
          </button>
          {picked !== null && (
            <button type="button" class="link small" onClick={() => setPicked(null)}>
              latest
            </button>
          )}
        </div>
        <div class="small">
          {changed.length === 0 ? (
            <span class="muted">no change to values</span>
          ) : (
            <>
              {changedAt === index ? "changed" : `last changed at frame #${source.seq}`}:{" "}
              {changed.map((p) => (
                <code key={p} class="changed-path">
                  {p}
                </code>
              ))}
            </>
          )}
        </div>
      </div>
      <JsonView key={index} value={version.values} open={3} highlight={source.changed} />
    </div>
  );
}

/** True when `path` has a changed descendant listed too (show only the deepest paths). */
function isAncestor(path: string, all: Set<string>): boolean {
  for (const other of all) if (other !== path && other.startsWith(`${path}/`)) return true;
  return false;
}
