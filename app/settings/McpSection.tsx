// MCP servers: the user's own tools and data for the agent. A server given by a command runs in
// the computer (over stdio); one given by a URL is remote, reached through the proxy. Each is
// listed with its state and tools; added, turned off or on, restarted and removed here, or edited
// as the JSON file users know from other agents.
import { useEffect, useState } from 'preact/hooks';
import type { McpInfo, McpServerInfo } from '../../protocol/mcp.ts';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { useAppStore } from '../connection/store.ts';
import { splitCommandLine } from './command-line.ts';
import { SectionMessage, type SectionMessageState } from './SectionMessage.tsx';

const EXAMPLE = `{
  "mcpServers": {
    "files": { "command": "node", "args": ["/workspace/tools/server.mjs"] },
    "crm": { "url": "https://crm.example.com/mcp" }
  }
}`;

const STATE: Record<McpServerInfo['state'], string> = { off: 'Off', starting: 'Starting…', ready: 'Running', failed: 'Stopped' };

type Servers = Record<string, Record<string, unknown>>;

function serversOf(text: string): Servers {
  if (!text.trim()) return {};
  const parsed = JSON.parse(text) as { mcpServers?: Servers };
  return { ...(parsed.mcpServers ?? {}) };
}

/** A server's entry in the file from what the user typed (a URL, or a command line), or why it cannot be one. */
function entryOf(target: string): Record<string, unknown> | string {
  if (/^https?:\/\//i.test(target)) return { url: target };
  let words: string[];
  try {
    words = splitCommandLine(target);
  } catch (error) {
    return `The command cannot be read: ${(error as Error).message}.`;
  }
  if (!words.length) return 'Give the command that starts the server, or its URL.';
  return { command: words[0], ...(words.length > 1 ? { args: words.slice(1) } : {}) };
}

export function McpSection() {
  const client = useStackClient();
  const live = useAppStore((state) => state.view.mcp);
  const [info, setInfo] = useState<McpInfo | null>(null);
  const [text, setText] = useState('');
  const [message, setMessage] = useState<SectionMessageState | null>(null);
  const [busy, setBusy] = useState(false);
  const [draft, setDraft] = useState({ name: '', target: '' });

  useEffect(() => {
    client.call('get_mcp', {}).then(
      (loaded) => {
        setInfo(loaded);
        setText(loaded.text);
        if (loaded.error) setMessage({ error: true, text: `${loaded.error} No server starts until this is fixed.` });
      },
      () => setMessage({ error: true, text: 'Could not load the MCP servers.' }),
    );
  }, []);
  // States and tools change as servers start and stop; the file text is the editor's own.
  const shown = live && info && live.text === info.text ? live : info;

  const save = async (next: string, done: (saved: McpInfo) => string) => {
    setBusy(true);
    setMessage(null);
    try {
      const saved = await client.call('save_mcp', { text: next });
      setInfo(saved);
      setText(saved.text);
      setMessage({ error: false, text: done(saved) });
      return true;
    } catch (failure) {
      setMessage({ error: true, text: failure instanceof StackCallError ? failure.message : 'Could not save the MCP servers.' });
      return false;
    } finally {
      setBusy(false);
    }
  };

  /** Changes one server in the stored file (not the editor's unsaved text). */
  const change = (edit: (servers: Servers) => void, done: string) => {
    let servers: Servers;
    try {
      servers = serversOf(info?.text ?? '');
    } catch {
      return setMessage({ error: true, text: 'The stored file is not valid JSON: fix it in the editor below first.' });
    }
    edit(servers);
    return save(JSON.stringify({ mcpServers: servers }, null, 2), () => done);
  };

  const add = async () => {
    const name = draft.name.trim();
    const entry = entryOf(draft.target.trim());
    if (typeof entry === 'string') return setMessage({ error: true, text: entry });
    if (info?.servers.some((server) => server.name === name)) return setMessage({ error: true, text: `There is already a server named "${name}".` });
    if (await change((servers) => void (servers[name] = entry), `Added ${name}: it starts now.`)) setDraft({ name: '', target: '' });
  };

  const restart = async (name: string) => {
    try {
      setInfo(await client.call('restart_mcp', { name }));
      setMessage({ error: false, text: `Restarting ${name}.` });
    } catch (failure) {
      setMessage({ error: true, text: failure instanceof StackCallError ? failure.message : `Could not restart ${name}.` });
    }
  };

  return (
    <section class="rules mcp" aria-labelledby="mcp-title">
      <h3 id="mcp-title">MCP servers</h3>
      <p class="rules-hint">
        Your own tools and data for the assistant. A server started by a command (a Python or Node server you installed with pip or npm) runs in this stack's computer, offline if it needs no network; one
        given by a URL is remote, reached through the proxy where its owner allows that host. Its tools are called <code>mcp__server__tool</code>, and each asks you the first time it is used.
      </p>
      {shown && shown.servers.length > 0 && (
        <ul class="rules-list mcp-servers" aria-label="MCP servers">
          {shown.servers.map((server) => (
            <McpServerItem
              key={server.name}
              server={server}
              busy={busy}
              toggle={() => void change((servers) => void (servers[server.name] = { ...servers[server.name], disabled: server.enabled || undefined }), server.enabled ? `Turned ${server.name} off.` : `Turned ${server.name} on.`)}
              restart={() => void restart(server.name)}
              remove={() => void change((servers) => void delete servers[server.name], `Removed ${server.name}.`)}
            />
          ))}
        </ul>
      )}
      <div class="rules-add" role="group" aria-label="Add an MCP server">
        <input aria-label="Server name" placeholder="Name, e.g. crm" value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
        <input aria-label="Command or URL" placeholder="python3 server.py, or https://…/mcp" value={draft.target} onInput={(e) => setDraft({ ...draft, target: e.currentTarget.value })} />
        <button type="button" class="button" disabled={busy || !info || !draft.name.trim() || !draft.target.trim()} onClick={() => void add()}>
          Add server
        </button>
      </div>
      <details class="mcp-file">
        <summary>Edit as a file</summary>
        <textarea
          class="hooks-editor"
          aria-label="MCP servers file (JSON)"
          spellcheck={false}
          rows={8}
          placeholder={EXAMPLE}
          value={text}
          disabled={!info}
          onInput={(event) => setText(event.currentTarget.value)}
        />
        <button type="button" class="button" disabled={busy || !info} onClick={() => void save(text, (saved) => `Saved: ${saved.servers.length} server${saved.servers.length === 1 ? '' : 's'}.`)}>
          {busy ? 'Applying…' : 'Apply servers'}
        </button>
      </details>
      <SectionMessage message={message} />
    </section>
  );
}

/** One server: its command or URL, its state, its tools, and its buttons. */
function McpServerItem({ server, busy, toggle, restart, remove }: { server: McpServerInfo; busy: boolean; toggle(): void; restart(): void; remove(): void }) {
  return (
    <li class={`mcp-server mcp-server--${server.state}`} aria-label={`MCP server ${server.name}`}>
      <div class="rule">
        <span class="rule-effect">{server.name}</span>
        <span class="rule-text">
          <code>{server.target}</code> · <span class="mcp-state">{server.enabled ? STATE[server.state] : 'Turned off'}</span>
          {server.transport === 'http' && <small> (remote)</small>}
        </span>
      </div>
      {server.error && server.enabled && (
        <p class="settings-error mcp-error">
          {server.error}
          {server.retry_at && server.state === 'failed' ? ` Tried again at ${new Date(server.retry_at).toLocaleTimeString()}.` : ''}
        </p>
      )}
      {server.tools.length > 0 && (
        <ul class="mcp-tools" aria-label={`Tools of ${server.name}`}>
          {server.tools.map((tool) => (
            <li key={tool.qualified}>
              <code>{tool.name}</code> {tool.description && <small>— {tool.description}</small>}
            </li>
          ))}
        </ul>
      )}
      <div class="mcp-actions">
        <button type="button" class="button" disabled={busy} onClick={toggle}>
          {server.enabled ? 'Turn off' : 'Turn on'}
        </button>
        {server.enabled && (
          <button type="button" class="button" disabled={busy} onClick={restart}>
            Restart
          </button>
        )}
        <button type="button" class="button" aria-label={`Remove ${server.name}`} disabled={busy} onClick={remove}>
          Remove
        </button>
      </div>
    </li>
  );
}
