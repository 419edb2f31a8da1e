import { useState } from "preact/hooks";
import { CodeBlock, Empty, ErrorNote, Tabs } from "../components/common";
import { JsonView } from "../components/json-view";
import { SchemaView } from "../components/schema-view";
import { descriptorOf, listAgents } from "../lib/agents";
import { api } from "../lib/api";
import { href, navigate, type Route } from "../lib/router";
import type { AcpAgent, AcpDescriptor } from "../lib/types";
import { useLoad } from "../lib/use-load";
import { RunForm } from "./run-form";

/** The agents of the config: a list, and one agent's descriptor beside a form to run it. */
export function AgentsView({ agentId, route }: { agentId?: string; route: Route }) {
  const agents = useLoad(listAgents, []);
  const list = agents.data ?? [];
  const selected = agentId ?? list[0]?.agent_id;
  return (
    <div class="split">
      <aside class="sidebar">
        <h1 class="sidebar-title">Agents</h1>
        <ErrorNote error={agents.error} />
        {agents.data && list.length === 0 && <Empty>No agents.</Empty>}
        <ul class="agent-list">
          {list.map((agent) => (
            <li key={agent.agent_id}>
              <a
                href={href(`/agents/${agent.agent_id}`)}
                class={`agent-item${agent.agent_id === selected ? " active" : ""}`}
                data-agent={agent.metadata.ref.name}
              >
                <span class="agent-name">{agent.metadata.ref.name}</span>
                <span class="muted small">{agent.metadata.ref.version}</span>
                <span class="agent-desc">{agent.metadata.description}</span>
              </a>
            </li>
          ))}
        </ul>
      </aside>
      <div class="content">
        {selected && (
          <AgentDetail
            key={selected}
            agent={list.find((a) => a.agent_id === selected)}
            agentId={selected}
            route={route}
          />
        )}
      </div>
    </div>
  );
}

function AgentDetail(props: { agent?: AcpAgent; agentId: string; route: Route }) {
  const { agentId, route } = props;
  const descriptor = useLoad(() => descriptorOf(agentId), [agentId]);
  const d = descriptor.data;
  if (descriptor.error) return <ErrorNote error={descriptor.error} />;
  if (!d) return <div class="muted">Loading…</div>;
  const { name, version } = d.metadata.ref;
  return (
    <div class="agent-detail">
      <header class="page-head">
        <div>
          <h1>
            {name} <span class="muted">{version}</span>
          </h1>
          <p class="lead">{d.metadata.description}</p>
          <div class="muted small mono">agent_id {agentId}</div>
        </div>
      </header>
      <div class="columns">
        <div class="column">
          <RunForm
            agentId={agentId}
            descriptor={d}
            threadId={route.query.get("thread") ?? undefined}
            onStarted={(session) =>
              navigate(
                session.kind === "stateful"
                  ? `/threads/${session.threadId}/runs/${session.runId}`
                  : `/runs/${session.runId}`,
              )
            }
          />
        </div>
        <div class="column">
          <Descriptor agentId={agentId} descriptor={d} />
        </div>
      </div>
    </div>
  );
}

type DescriptorTab = "input" | "config" | "output" | "state" | "interrupts" | "faces";

function Descriptor({ agentId, descriptor }: { agentId: string; descriptor: AcpDescriptor }) {
  const [tab, setTab] = useState<DescriptorTab>("input");
  const { specs } = descriptor;
  const caps = specs.capabilities ?? {};
  const modes = Object.entries(caps.streaming ?? {})
    .filter(([, on]) => on)
    .map(([mode]) => mode);
  return (
    <section class="card">
      <header class="card-head">
        <h2>Descriptor</h2>
        <div class="chips">
          {(["threads", "interrupts", "callbacks"] as const).map((c) => (
            <span key={c} class={`chip${caps[c] ? " on" : ""}`} title={`capabilities.${c}`}>
              {caps[c] ? "✓" : "✗"} {c}
            </span>
          ))}
          {modes.map((m) => (
            <span key={m} class="chip on" title="capabilities.streaming">
              stream: {m}
            </span>
          ))}
        </div>
      </header>
      <div class="card-body">
        <Tabs
          active={tab}
          onChange={setTab}
          tabs={[
            { id: "input", label: "Input" },
            { id: "config", label: "Config" },
            { id: "output", label: "Output" },
            { id: "state", label: "Thread state" },
            { id: "interrupts", label: `Interrupts (${specs.interrupts?.length ?? 0})` },
            { id: "faces", label: "Protocols" },
          ]}
        />
        <div class="tab-body">
          {tab === "input" && <SchemaView schema={specs.input} />}
          {tab === "config" && <SchemaView schema={specs.config} />}
          {tab === "output" && <SchemaView schema={specs.output} />}
          {tab === "state" && <SchemaView schema={specs.thread_state} />}
          {tab === "interrupts" && <Interrupts descriptor={descriptor} />}
          {tab === "faces" && <Faces agentId={agentId} descriptor={descriptor} />}
        </div>
      </div>
    </section>
  );
}

function Interrupts({ descriptor }: { descriptor: AcpDescriptor }) {
  const list = descriptor.specs.interrupts ?? [];
  if (list.length === 0) return <Empty>This agent declares no interrupts.</Empty>;
  return (
    <div class="stack">
      {list.map((entry) => (
        <div key={entry.interrupt_type} class="subcard">
          <h3>
            <code>{entry.interrupt_type}</code>
            {entry.interrupt_type === "*" && <span class="muted small"> any interrupt type</span>}
          </h3>
          <div class="two">
            <div>
              <h4>What the agent sends</h4>
              <SchemaView schema={entry.interrupt_payload} />
            </div>
            <div>
              <h4>What a resume must send</h4>
              <SchemaView schema={entry.resume_payload} />
            </div>
          </div>
        </div>
      ))}
    </div>
  );
}

/** Which protocol faces serve the agent, at which URLs, with the AG-UI capabilities. */
function Faces({ agentId, descriptor }: { agentId: string; descriptor: AcpDescriptor }) {
  const name = descriptor.metadata.ref.name;
  const origin = location.origin;
  const caps = useLoad(() => api(`/agents/${agentId}/ag-ui/capabilities`), [agentId]);
  return (
    <div class="stack">
      <div>
        <h4>ACP 0.2.1</h4>
        <table class="table compact">
          <tbody>
            <tr>
              <td>stateless runs</td>
              <td class="mono">POST {origin}/runs, /runs/stream, /runs/wait</td>
            </tr>
            <tr>
              <td>thread runs</td>
              <td class="mono">POST {origin}/threads/&#123;thread_id&#125;/runs[/stream|/wait]</td>
            </tr>
            <tr>
              <td>descriptor</td>
              <td class="mono">
                GET {origin}/agents/{agentId}/descriptor
              </td>
            </tr>
          </tbody>
        </table>
      </div>
      <div>
        <h4>AG-UI (CopilotKit, @ag-ui/client)</h4>
        <CodeBlock label="by name" code={`${origin}/ag-ui/${name}`} />
        <CodeBlock label="by id" code={`${origin}/agents/${agentId}/ag-ui`} />
        <CodeBlock
          label="@ag-ui/client"
          code={`new HttpAgent({ url: "${origin}/ag-ui/${name}" })`}
        />
      </div>
      <div>
        <h4>AG-UI capabilities</h4>
        <ErrorNote error={caps.error} />
        {caps.data !== undefined && <JsonView value={caps.data} open={1} />}
      </div>
    </div>
  );
}
