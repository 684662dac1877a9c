// The task board: the subagents of this stack's missions (the agent's `task` tool), newest first —
// what each was asked, what it does now, what it has spent — with its transcript one click away
// and a Cancel for one still at work (its mission goes on and the agent is told).
import type { NodeProps } from '@xyflow/react';
import { memo } from 'preact/compat';
import { useEffect, useState } from 'preact/hooks';
import { tokensOf, type SubagentInfo, type SubagentStep } from '../../protocol/missions.ts';
import { formatDuration, formatSpend } from '../chat/format.ts';
import type { BoardEntry } from '../connection/events.ts';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { useAppStore } from '../connection/store.ts';
import type { BoardWindowNodeType } from './window-nodes.ts';
import { WindowFrame } from './WindowFrame.tsx';

const STATUS_LABEL: Record<SubagentInfo['status'], string> = { waiting: 'Waiting', running: 'Running', completed: 'Done', failed: 'Failed', cancelled: 'Cancelled' };

export const BoardWindowNode = memo(function BoardWindowNode({ data, selected }: NodeProps<BoardWindowNodeType>) {
  const client = useStackClient();
  const subagents = useAppStore((state) => state.view.subagents);
  const [open, setOpen] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const entries = Object.values(subagents).sort((a, b) => b.info.started_at - a.info.started_at || b.info.id.localeCompare(a.info.id));
  const working = entries.filter(({ info }) => info.status === 'waiting' || info.status === 'running').length;
  const now = useClock(working > 0);

  const cancel = async (info: SubagentInfo) => {
    setProblem(null);
    try {
      const { cancelled } = await client.call('cancel_subagent', { subagent_id: info.id });
      if (!cancelled) setProblem(`"${info.description}" had already ended.`);
    } catch (error) {
      setProblem(error instanceof StackCallError ? error.message : 'The subagent could not be cancelled.');
    }
  };

  return (
    <WindowFrame window={data.window} selected={selected} scrolls>
      {problem && (
        <p class="window-problem" role="alert">
          {problem}
        </p>
      )}
      {entries.length === 0 ? (
        <p class="tasks-empty">No subagents yet. When the agent splits work into parts (its task tool), each part shows here while it runs.</p>
      ) : (
        <>
          <p class="board-summary" aria-live="polite">
            {working ? `${working} at work` : 'All finished'} · {entries.length} in all
          </p>
          <ul class="tasks-list nodrag" aria-label="Subagents">
            {entries.map((entry) => (
              <BoardItem key={entry.info.id} entry={entry} now={now} open={open === entry.info.id} onToggle={() => setOpen(open === entry.info.id ? null : entry.info.id)} onCancel={() => void cancel(entry.info)} />
            ))}
          </ul>
        </>
      )}
    </WindowFrame>
  );
});

function BoardItem({ entry, now, open, onToggle, onCancel }: { entry: BoardEntry; now: number; open: boolean; onToggle(): void; onCancel(): void }) {
  const { info, steps } = entry;
  const working = info.status === 'waiting' || info.status === 'running';
  const took = (info.finished_at ?? now) - info.started_at;
  return (
    <li class={`task subagent subagent--${info.status}`} aria-label={info.description}>
      <div class="task-head">
        <strong class="task-title">{info.description}</strong>
        <span class="task-status" data-status={info.status}>
          {STATUS_LABEL[info.status]}
        </span>
      </div>
      <p class="subagent-activity">{working ? info.activity : info.status === 'completed' ? info.result : info.error}</p>
      <p class="task-schedule" data-role="subagent-spend">
        {formatSpend({ tokens: tokensOf(info.usage), cost_usd: info.usage.cost_usd }, ' · cost unknown')} · {info.tool_calls} tool call{info.tool_calls === 1 ? '' : 's'} · {formatDuration(Math.max(0, took))}
      </p>
      <div class="task-actions" role="group" aria-label={`${info.description}: actions`}>
        <button type="button" class="window-tool" aria-expanded={open} onClick={onToggle}>
          {open ? 'Hide transcript' : 'Transcript'}
        </button>
        {working && (
          <button type="button" class="window-tool" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
      {open && <Transcript info={info} steps={steps} />}
    </li>
  );
}

function Transcript({ info, steps }: { info: SubagentInfo; steps: SubagentStep[] }) {
  return (
    <ol class="subagent-transcript" aria-label={`${info.description}: transcript`}>
      <li class="subagent-step subagent-step--prompt">
        <span class="subagent-step-label">Asked</span> {info.prompt}
        <span class="subagent-tools"> (tools: {info.tools.join(', ') || 'none'})</span>
      </li>
      {steps.map((step, i) =>
        step.kind === 'text' ? (
          <li key={i} class="subagent-step">
            <span class="subagent-step-label">Said</span> {step.text}
          </li>
        ) : (
          <li key={step.tool_use_id} class="subagent-step" data-status={step.status}>
            <span class="subagent-step-label">{step.status === 'running' ? 'Running' : step.status === 'ok' ? 'Ran' : 'Failed'}</span> {step.title}
            {step.summary && <pre class="subagent-step-output">{step.summary}</pre>}
          </li>
        ),
      )}
      {info.status === 'waiting' && <li class="subagent-step">Waiting for a free place (a few subagents work at once).</li>}
    </ol>
  );
}

/** Now, once a second while something runs, so durations move. */
function useClock(ticking: boolean): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!ticking) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [ticking]);
  return now;
}
