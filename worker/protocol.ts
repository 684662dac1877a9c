// The one protocol between the app and a stack worker: requests, responses, events, the API.
// `app/` imports this module as types only (plus `assertNever` and the few helpers both sides
// share), so nothing here may touch the DOM or any worker-only API.

/** A plain error shape: what crosses a worker boundary instead of an Error instance. */
export interface ErrorShape {
  code: ErrorCode;
  message: string;
  retryable?: boolean;
}

export type ErrorCode =
  | 'bad_request'
  | 'not_found'
  | 'busy'
  | 'model_not_configured'
  | 'model_unreachable'
  | 'model_rate_limited'
  | 'model_overloaded'
  | 'model_error'
  | 'model_stream_broken'
  | 'model_rejected'
  | 'aborted'
  | 'turn_limit'
  | 'storage'
  /** A stack file over the size an import takes without asking: the user may say yes (`allowLarge`). */
  | 'too_large'
  | 'interrupted'
  | 'demo_unavailable'
  | 'demo_off_script'
  | 'hook_blocked'
  /** A mission (with its subagents) reached the token budget set in Settings. */
  | 'budget'
  | 'internal';

// ---------------------------------------------------------------------------------------------
// Documents (the user's uploads, under documents/)

export interface DocumentInfo {
  id: string;
  filename: string;
  /** In user space, e.g. `documents/invoice.pdf` (the computer sees /workspace/documents/...). */
  path: string;
  mime: string;
  size: number;
  status: string;
  description: string;
  page_count: number | null;
  /** Why processing failed, in words for the user. */
  error: string | null;
}

// ---------------------------------------------------------------------------------------------
// Permission rules (checked before every tool call)

export type RuleMatch =
  | { type: 'always' }
  | { type: 'path_prefix'; prefix: string }
  | { type: 'command'; pattern: string }
  | { type: 'private_network' }
  /** A web address whose host the user did not name (nor allow with a click) this conversation. */
  | { type: 'address_not_from_user' }
  | { type: 'delete_many'; threshold: number };

export interface PermissionRule {
  id: string;
  /** Defaults cannot be removed; the agent's rules only by the user. */
  source: 'default' | 'user' | 'agent';
  effect: 'deny' | 'ask';
  /** Tool names, or ["*"]. */
  tools: string[];
  match: RuleMatch;
  reason: string;
}

export type NewPermissionRule = Omit<PermissionRule, 'id' | 'source'>;

// ---------------------------------------------------------------------------------------------
// Hooks (commands the user sets to run in the computer at points of the agent's work)

/** Before and after a tool call, when the user sends a message, when a mission is about to stop. */
export type HookEvent = 'PreToolUse' | 'PostToolUse' | 'UserPromptSubmit' | 'Stop';

/**
 * One hook's run. `blocked`: it exited 2; `failed`: another non-zero exit; `timed_out`: killed at
 * its time limit; `unavailable`: the computer could not run it; `cancelled`: the mission stopped.
 */
export interface HookRun {
  event: HookEvent;
  command: string;
  outcome: 'ok' | 'blocked' | 'failed' | 'timed_out' | 'unavailable' | 'cancelled';
  exit_code: number | null;
  duration_ms: number;
  /** Each at most 4,000 characters. */
  stdout: string;
  stderr: string;
}

/** The stack's hooks: the file as stored (pretty-printed), and each hook; `error` when the stored file is not valid (then none runs). */
export interface HooksInfo {
  text: string;
  error: string | null;
  hooks: { event: HookEvent; matcher?: string; command: string; timeout: number }[];
}

// ---------------------------------------------------------------------------------------------
// MCP servers (the user's own tools and data: run in the computer over stdio, or remote)

/** One tool a server offers, as the model sees it (`mcp__<server>__<tool>`). */
export interface McpToolInfo {
  name: string;
  /** The name the model calls. */
  qualified: string;
  description: string;
}

/**
 * A server as Settings shows it. `state`: `off` (disabled, or not started yet), `starting`,
 * `ready`, `failed` (its last start or run ended badly; `error` says how, and `retry_at` when it
 * is tried again, ms since the epoch).
 */
export interface McpServerInfo {
  name: string;
  transport: 'stdio' | 'http';
  /** The command line (stdio) or the URL (http). */
  target: string;
  enabled: boolean;
  state: 'off' | 'starting' | 'ready' | 'failed';
  error: string | null;
  retry_at: number | null;
  /** How many times it was started since the stack opened. */
  starts: number;
  tools: McpToolInfo[];
}

/** The stack's MCP servers: the file as stored (pretty-printed), each server; `error` when the file is not valid (then none runs). */
export interface McpInfo {
  text: string;
  error: string | null;
  servers: McpServerInfo[];
}

// ---------------------------------------------------------------------------------------------
// Skills (procedures the agent loads when relevant)

/** A skill as listed: the system prompt shows its name and description only. `tools`: what it says it uses (shown; it grants nothing). */
export interface SkillInfo {
  name: string;
  description: string;
  tools: string[];
  source: 'built_in' | 'installed';
}

/** A skill as shown before and after installing: its SKILL.md and the names of its other files. */
export type SkillDetail = SkillInfo & { text: string; files: string[] };

// ---------------------------------------------------------------------------------------------
// Settings

/**
 * Where model calls go: the proxy, which holds the key (the default; the browser never sees a
 * key); Anthropic directly with the user's own key, kept only in this browser; or any
 * OpenAI-compatible endpoint with tool calling (e.g. a local model server, for offline work).
 */
export type Provider = 'proxy' | 'anthropic' | 'openai';

export type SettingsPatch = Partial<Omit<Settings, 'has_api_key' | 'heartbeat_quiet'>> & { api_key?: string | null; heartbeat_quiet?: Settings['heartbeat_quiet'] | null };

export interface Settings {
  provider: Provider;
  /** Base URL of the model endpoint for the provider. */
  endpoint: string;
  /** Whether a key is stored for the direct providers. The key itself never leaves the worker. */
  has_api_key: boolean;
  /** Anthropic model id sent with every request. */
  model: string;
  /** Minutes between heartbeats (the agent's own check-ins); 0 turns them off. */
  heartbeat_minutes: number;
  /**
   * No heartbeat between these local times ("HH:MM", e.g. 22:00 to 07:00 across midnight); absent:
   * none. A patch with null removes them.
   */
  heartbeat_quiet?: { from: string; to: string };
  /**
   * Who reads scans: `local` (tesseract in this browser, offline) or `mistral` (Mistral OCR
   * through the proxy, which holds its key; falls back to local when it cannot be reached).
   */
  ocr_engine: OcrEngineChoice;
  /**
   * The language scans are in: `auto` (read in English first, again in another language when
   * the text plainly is one; the default when absent) or one of eng, deu, fra, spa, ita, por, nld.
   */
  ocr_language?: OcrLanguageChoice;
  /**
   * Whether the stack's computer may use the network (the proxy's relay, for a paired device).
   * A change reaches a running computer at once (its open connections end).
   */
  computer_network: boolean;
  /**
   * Tokens one mission may use, its subagents' included (input, output and cache, as counted in
   * the chat); the mission stops, saying so, once it reaches them. Absent or 0: no limit.
   */
  mission_token_budget?: number;
  /**
   * The stack is a kiosk (set by its owner in this browser): a question to widen what the agent may
   * do is never put to a visitor, it is refused, so only what the owner allowed runs.
   */
  kiosk?: boolean;
}

export type OcrEngineChoice = 'local' | 'mistral';
/** The languages scans can be read in, by tesseract's names, as Settings lists them. */
export const OCR_LANGUAGES = {
  eng: 'English',
  deu: 'Deutsch',
  fra: 'Français',
  spa: 'Español',
  ita: 'Italiano',
  por: 'Português',
  nld: 'Nederlands',
} as const;
export type OcrLanguageChoice = 'auto' | keyof typeof OCR_LANGUAGES;

// ---------------------------------------------------------------------------------------------
// Canvas windows (the agent owns content; the user owns geometry, which lives in the app)

export type WindowKind = CanvasWindow['kind'];

interface WindowBase {
  id: string;
  title: string;
  created_at: number;
  updated_at: number;
}

export interface NotesWindow extends WindowBase {
  kind: 'notes';
  /** Markdown. */
  content: string;
}

export type ColumnType = 'text' | 'number' | 'currency' | 'date' | 'boolean';
export type CellValue = string | number | boolean | null;

export interface TableColumn {
  /** The key of this column's values in each row's cells. */
  key: string;
  label: string;
  type: ColumnType;
  /** ISO 4217 code for currency columns, e.g. "EUR". */
  currency?: string;
}

export interface TableRow {
  /** Stable across edits and reloads; a cell edit names its row by it. */
  id: string;
  cells: Record<string, CellValue>;
  /**
   * Cells whose value came from words OCR was unsure of: column key -> confidence (0..100). A
   * patch that carries it replaces the row's; a cell the user edits loses its mark.
   */
  uncertain?: Record<string, number>;
}

export interface TableWindow extends WindowBase {
  kind: 'table';
  columns: TableColumn[];
  rows: TableRow[];
}

export type ChartType = 'bar' | 'line' | 'pie';

/** A chart draws either a table window's columns (and follows its edits) or its own numbers. */
export type ChartSource =
  | { type: 'table'; table_id: string; x: string; y: string[] }
  | { type: 'inline'; labels: string[]; series: { name: string; values: number[] }[] };

export interface ChartWindow extends WindowBase {
  kind: 'chart';
  chart: ChartType;
  source: ChartSource;
}

export interface DocumentWindow extends WindowBase {
  kind: 'document';
  /** Path in the stack's user space, e.g. `documents/invoice.pdf`. */
  path: string;
  mime: string;
}

/** The computer's serial root shell; its bytes stream through `StackApi.subscribeTerminal`. */
export interface TerminalWindow extends WindowBase {
  kind: 'terminal';
}

/** The stack's scheduled tasks; its list comes from `list_tasks` and `task_changed` events. */
export interface TasksWindow extends WindowBase {
  kind: 'tasks';
}

/** The stack's checkpoints, to restore or open as a new stack; its list comes from `list_checkpoints`. */
export interface TimelineWindow extends WindowBase {
  kind: 'timeline';
  /** A checkpoint the agent proposed to go back to, with its reason; only the user restores. */
  proposed?: { checkpoint_id: string; reason: string };
}

/** A checkpoint as the timeline shows it: when, why, what changed since the one before, its room. */
export interface CheckpointInfo {
  id: string;
  created_at: number;
  reason: 'mission' | 'manual' | 'scheduled' | 'before_restore';
  label: string;
  /** The paths (the first 50 of each kind), how many of each kind in all, and whether the computer and the databases changed. */
  changes: { added: string[]; removed: string[]; changed: string[]; counts: { added: number; removed: number; changed: number }; computer: boolean; databases: boolean };
  /** Bytes it added to the checkpoints' room; the stack's whole size at that point. */
  added_bytes: number;
  total_bytes: number;
}

export interface CheckpointList {
  checkpoints: CheckpointInfo[];
  /** The room every checkpoint takes together (they share what did not change). */
  bytes: number;
  /** The rule old ones are pruned by, in words. */
  rule: string;
}

/** The subagents of this stack's missions, running and finished; its list comes from `subagent_*` events. */
export interface BoardWindow extends WindowBase {
  kind: 'board';
}

export type CanvasWindow = NotesWindow | TableWindow | ChartWindow | DocumentWindow | TerminalWindow | TasksWindow | BoardWindow | TimelineWindow;

/**
 * A change to one window. Tables change by rows, so a cell edit in a 10k-row table sends one row,
 * not the table. Applied the same way in the worker and the app (`applyWindowPatch`).
 */
export type WindowPatch =
  | { op: 'set'; title?: string; content?: string; chart?: ChartType; source?: ChartSource; path?: string; mime?: string; proposed?: { checkpoint_id: string; reason: string } }
  | { op: 'set_columns'; columns: TableColumn[] }
  | { op: 'upsert_rows'; rows: TableRow[] }
  | { op: 'delete_rows'; row_ids: string[] };

/**
 * Where a stack came from, when not from this browser: a `.stack` file (imported, opened from the
 * OS or shared to the app) or a template file. A stack made here has none and is its owner's.
 */
export type StackOrigin = 'stack_file' | 'template_file';

/** One thing a stack from elsewhere would do, held until its owner allows it (worker/trust.ts). */
export interface TrustItem {
  /** Stable for the stack: `hook:…`, `task:<id>`, `endpoint`, … */
  id: string;
  kind: 'endpoint' | 'ocr' | 'network' | 'heartbeat' | 'hook' | 'mcp' | 'rule' | 'skill' | 'task' | 'hosts';
  /** What it would do, in plain words. */
  title: string;
  /** Exactly what: the command, schedule, address, rule or hosts. */
  detail: string;
  /** The owner's answer; null: not reviewed yet (held). */
  allowed: boolean | null;
}

/**
 * A stack from elsewhere: restricted (it runs and sends nothing it brought) until its owner
 * reviews what it would enable; null for a stack made here.
 */
export interface TrustState {
  origin: StackOrigin;
  /** The file's name, when known. */
  file_name: string | null;
  /** When it arrived (epoch ms). */
  arrived_at: number;
  /** True until the owner has reviewed it. */
  restricted: boolean;
  items: TrustItem[];
}

// ---------------------------------------------------------------------------------------------
// Requests and responses: `{id, method, params}` answered by `{request_id, ok, result | error}`

export interface RequestMap {
  /** Start a chat mission. Resolves once it is accepted, not when it finishes. */
  mission: { params: { text: string }; result: { mission_id: string } };
  /** Run a heartbeat now (the agent's periodic check-in), queued behind any running mission. */
  heartbeat: { params: Record<string, never>; result: { mission_id: string } };
  /**
   * Play the recorded demo on the sample documents (already uploaded): a mission whose model turns
   * come from a recording shipped in the build. Refused (`demo_unavailable`) while a model answers.
   */
  play_demo: { params: Record<string, never>; result: { mission_id: string } };
  /** Stop the running and queued missions (or the named one). */
  abort: { params: { mission_id?: string }; result: { aborted: boolean } };
  get_settings: { params: Record<string, never>; result: Settings };
  /** `api_key`: a string stores the user's key (direct providers), null forgets it. */
  update_settings: { params: SettingsPatch; result: Settings };
  /** Re-check that the model endpoint answers (emits `model_status`). */
  check_model: { params: Record<string, never>; result: ModelStatus };
  /**
   * Pair this browser with the proxy in the settings, with the one-time code its owner gave
   * (`npm run pair` locally). The device token is kept for every stack of this browser.
   */
  pair_device: { params: { code: string }; result: ModelStatus };
  /** Forget this browser's token for the proxy in the settings. */
  unpair_device: { params: Record<string, never>; result: ModelStatus };
  /** A user action on the canvas; applied at once, and the agent hears of it in its next turn. */
  canvas_interaction: { params: CanvasInteraction; result: Record<string, never> };
  /** The user's answer to a permission_requested event. */
  answer_permission: { params: { ask_id: string; allow: boolean }; result: { answered: boolean } };
  list_permission_rules: { params: Record<string, never>; result: PermissionRule[] };
  add_permission_rule: { params: NewPermissionRule; result: PermissionRule };
  remove_permission_rule: { params: { rule_id: string }; result: Record<string, never> };
  /** The heartbeat's checklist (`.os/HEARTBEAT.md`), read by the agent on each beat; '' when none. */
  get_heartbeat_checklist: { params: Record<string, never>; result: { text: string } };
  save_heartbeat_checklist: { params: { text: string }; result: { text: string } };
  list_skills: { params: Record<string, never>; result: SkillInfo[] };
  /**
   * Installs a skill from a folder's files (paths inside it, e.g. `my-skill/SKILL.md`, text only)
   * or a lone SKILL.md; `dry_run` only checks and shows it. Replaces an installed skill of its name.
   */
  install_skill: { params: { files: { path: string; text: string }[]; dry_run?: boolean }; result: SkillDetail };
  remove_skill: { params: { name: string }; result: Record<string, never> };
  /** The stack's scheduled tasks, oldest first, each with its latest runs. */
  list_tasks: { params: Record<string, never>; result: TaskInfo[] };
  /** Pause or resume, or change what a task asks or when; refused (`bad_request`, saying why) when invalid. */
  update_task: { params: { task_id: string; title?: string; prompt?: string; schedule?: TaskScheduleInput; paused?: boolean }; result: TaskInfo };
  /** Runs a task now, outside its schedule. */
  run_task: { params: { task_id: string }; result: TaskInfo };
  delete_task: { params: { task_id: string }; result: Record<string, never> };
  get_hooks: { params: Record<string, never>; result: HooksInfo };
  /** Replaces the stack's hooks with the user's edited file; refused (`bad_request`, saying what is wrong) when it is not valid. */
  save_hooks: { params: { text: string }; result: HooksInfo };
  /** The MCP servers and their state; starts the enabled ones not running yet (to list their tools). */
  get_mcp: { params: Record<string, never>; result: McpInfo };
  /** Replaces `.os/config/mcp.json` with the user's edited file; refused (`bad_request`, saying what is wrong) when it is not valid. */
  save_mcp: { params: { text: string }; result: McpInfo };
  /** Stops and starts a server again now (its backoff forgotten). */
  restart_mcp: { params: { name: string }; result: McpInfo };
  /**
   * Learn from the turns waiting in the transcript now, instead of at the next batch (every 25
   * turns) or compaction. Runs one processor pass; `remaining` turns still wait after it.
   */
  learn_now: { params: Record<string, never>; result: { status: 'done' | 'failed'; learnings: number; files: string[]; remaining: number; error?: string } };
  /**
   * Stores a file the user dropped, picked or pasted under documents/ and records it. The page
   * hands over the picked File itself (a handle, cheap to post): its bytes are read here, off the
   * page's main thread.
   */
  upload_file: { params: { name: string; bytes: Uint8Array | Blob }; result: DocumentInfo };
  /** A table window as a file to download, made by the worker (the one place exports are made). */
  export_window: { params: { window_id: string; format: 'csv' | 'json' | 'xlsx' }; result: { filename: string; mime: string; bytes: Uint8Array } };
  /** The user opens a window themselves (the subbar's +); the agent hears of it. */
  open_window: { params: { kind: 'notes' | 'terminal' | 'tasks' | 'board' | 'timeline'; title: string } | { kind: 'document'; path: string }; result: CanvasWindow };
  /** The stack's checkpoints, newest first, the room they take and the rule that prunes them. */
  list_checkpoints: { params: Record<string, never>; result: CheckpointList };
  /** "Checkpoint now": the whole stack as it stands; `layout`: the page's window places. */
  take_checkpoint: { params: { label?: string; layout?: string | null }; result: CheckpointInfo };
  delete_checkpoint: { params: { checkpoint_id: string }; result: CheckpointList };
  /** Stops one subagent (the `task` tool's); its mission goes on and the agent is told. */
  cancel_subagent: { params: { subagent_id: string }; result: { cancelled: boolean } };
  /**
   * The computer: `start` (also after an error), `suspend` (save it so the next open wakes in
   * about a second), `reboot` (cold boot, the disk kept), `reset` (back to the pristine image;
   * the system disk's changes are lost, /workspace is kept).
   */
  /**
   * `save`: save the computer's state now if it changed since its last save (the page is being
   * hidden). `rest`: suspend it unless something runs in it or the agent is working (the page has
   * been hidden a while); the next use wakes it.
   */
  computer: { params: { action: ComputerAction }; result: ComputerStatus };
  /** The computer's network this session (polled while Settings is open). */
  computer_network: { params: Record<string, never>; result: ComputerNetworkUse };
  /**
   * The tab was hidden and may be discarded next (ChromeOS under memory pressure): what can be
   * made again gives its memory back now. The OCR workers not reading a page end (100-200 MB
   * each; the next scan starts one again, about 1.5 s). `ocr_workers`: how many ended.
   */
  release_memory: { params: Record<string, never>; result: { ocr_workers: number } };
  /** Reads an uploaded scan again, in the language given (its window's "Read in"); the result comes as document events. */
  read_document_again: { params: { document_id: string; language: OcrLanguageChoice }; result: DocumentInfo };
  /** A file from the stack's user space, e.g. for a document window. */
  read_file: { params: { path: string }; result: { path: string; size: number; mime: string; bytes: Uint8Array } };
  /**
   * Makes the stack's files still, so they can be copied whole (duplicating the open stack): waits
   * for documents being read, saves and stops the computer, closes the databases. Refused (`busy`)
   * while the agent works. Nothing works after it: the app stops this worker next. `snapshot`
   * (an export): consistent copies of both databases are made first, in `.os/snapshot/`.
   */
  close: { params: { snapshot?: boolean }; result: Record<string, never> };
  /** Where the stack came from and what it brought, each item with the owner's answer; null for a stack made here. */
  get_trust: { params: Record<string, never>; result: TrustState | null };
  /**
   * The owner's review of a stack from elsewhere: each item id allowed (true) or not (false);
   * items not named keep their answer (a held one stays held, as not allowed). Ends restricted mode.
   */
  review_trust: { params: { decisions: Record<string, boolean> }; result: TrustState | null };
}

export type Method = keyof RequestMap;
export type ParamsOf<M extends Method> = RequestMap[M]['params'];
export type ResultOf<M extends Method> = RequestMap[M]['result'];

export type StackRequest<M extends Method = Method> = {
  [K in M]: { id: string; method: K; params: ParamsOf<K> };
}[M];

export type StackResponse<M extends Method = Method> =
  | { request_id: string; ok: true; result: ResultOf<M> }
  | { request_id: string; ok: false; error: ErrorShape };

/** What the user did on the canvas; the agent hears of each in its next turn. */
export type CanvasInteraction =
  | { type: 'window_closed'; window_id: string }
  | { type: 'window_opened_by_user'; window_id: string }
  | { type: 'window_renamed'; window_id: string; title: string }
  | { type: 'cell_edited'; window_id: string; row_id: string; column: string; value: CellValue }
  /** The user changed a notes window's markdown (saved as they type, debounced). */
  | { type: 'notes_edited'; window_id: string; content: string };

// ---------------------------------------------------------------------------------------------
// Events: every one carries a monotonic `seq` so a client can resume after an offset

/**
 * `device`: the name this browser is paired under, through a proxy (also when the proxy has no
 * model key), and `network` where that proxy lets the computer connect. `pairing`: set when the
 * proxy needs this device paired first ('code': with a code from its owner; 'local': it pairs by itself).
 */
export type ModelStatus =
  | { state: 'unknown' }
  | { state: 'ready'; endpoint: string; device?: string; network?: ProxyNetwork }
  | { state: 'not_configured'; endpoint: string; message: string; pairing?: 'code' | 'local'; device?: string; network?: ProxyNetwork }
  | { state: 'unreachable'; endpoint: string; message: string };

/** Where the proxy lets a paired device's computer connect: host names (`*.example.com` for any under it) and ports. */
export interface ProxyNetwork {
  hosts: string[];
  ports: number[];
}

/** The computer's network since the page opened: frame bytes out and in, all its starts and wakes together. */
export interface ComputerNetworkUse {
  sent_bytes: number;
  received_bytes: number;
  /** Whether the running computer started with the proxy's network behind it; null when it is not running. */
  online: boolean | null;
}

/** `interrupted`: the page went away while it ran; closed when the stack opened again. */
export type MissionStatus = 'completed' | 'failed' | 'aborted' | 'interrupted';
/**
 * A chat message from the user, the agent's own periodic check-in, or the recorded demo (its
 * replies pre-recorded, never from a model; it never enters the model's conversation or memory).
 */
export type MissionKind = 'chat' | 'heartbeat' | 'demo' | 'scheduled';

/** A scheduled task's run, on its mission's events: which task, which try, and whether it was missed. */
export interface MissionTask {
  id: string;
  title: string;
  attempt: number;
  of: number;
  /** Due while the app was closed; run when it opened. */
  missed: boolean;
}

/** When a task runs: once at a time (ISO 8601 or epoch ms), by a cron expression in a time zone (the user's when absent), or when idle. */
export type TaskScheduleInput = { kind: 'once'; at: string | number } | { kind: 'cron'; cron: string; timezone?: string } | { kind: 'backlog' };

export interface TaskRunInfo {
  id: number;
  due_at: number;
  missed: boolean;
  status: 'running' | 'succeeded' | 'failed' | 'stopped';
  /** Tries so far (a failed try is retried with backoff, three in all). */
  attempts: number;
  mission_ids: string[];
  error: string | null;
  started_at: number;
  finished_at: number | null;
}

export interface TaskInfo {
  id: string;
  title: string;
  prompt: string;
  kind: 'once' | 'cron' | 'backlog';
  at: number | null;
  cron: string | null;
  timezone: string | null;
  /** The schedule in words. */
  schedule: string;
  /** done: a one-off (or backlog item) that ran; failed: one whose last run failed. */
  status: 'active' | 'paused' | 'done' | 'failed';
  next_run_at: number | null;
  created_by: 'agent' | 'user';
  created_at: number;
  /** A run is going on (or waiting to retry). */
  running: boolean;
  /** The latest runs, newest first. */
  runs: TaskRunInfo[];
}

/**
 * A subagent: the `task` tool's helper with its own context, a prompt and a few tools, working for
 * a mission. `waiting`: for a free place (a few run at once). `activity`: what it does now, in
 * words. `usage`: its model calls so far (the mission's own usage includes it once it ends).
 */
export interface SubagentInfo {
  id: string;
  mission_id: string;
  tool_use_id: string;
  description: string;
  prompt: string;
  tools: string[];
  status: 'waiting' | 'running' | 'completed' | 'failed' | 'cancelled';
  activity: string;
  usage: Usage;
  tool_calls: number;
  started_at: number;
  finished_at: number | null;
  /** Its answer to the mission (the start of it), once completed. */
  result: string | null;
  /** Why it failed or stopped. */
  error: string | null;
}

/** One step of a subagent's transcript: what it said, or a tool call (reported when it starts and again when it ends). */
export type SubagentStep =
  | { kind: 'text'; text: string }
  | { kind: 'tool'; tool_use_id: string; name: string; title: string; status: 'running' | 'ok' | 'error'; summary: string };

/** A stack template shipped with the app, as `templates/index.json` lists it (templates/README.md). */
export interface TemplateInfo {
  slug: string;
  name: string;
  description: string;
  /** Its `.stack` file, relative to the app's base. */
  file: string;
  bytes: number;
}

/** A heartbeat's whole answer when nothing needs doing: it leaves no trace in the chat. */
export const HEARTBEAT_OK = 'HEARTBEAT_OK';

/**
 * The project's own sample documents, shipped in the build under `samples/` (vite.config.ts makes
 * them from its fixture generator): what the first run offers and the recorded demo reads.
 */
export const SAMPLE_DOCUMENTS = ['harbour-city-plumbing-invoice.pdf', 'northwind-logistics-invoice.pdf', 'daily-grind-receipt-scan.jpg'] as const;

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** US dollars; null when the model's price is unknown (e.g. a local model). */
  cost_usd: number | null;
}

/** All the tokens a usage counts (input, output and cache): what the chat shows and a budget limits. */
export function tokensOf(usage: Usage): number {
  return usage.input_tokens + usage.output_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
}

export type StackEventBody =
  | { type: 'mission_queued'; mission_id: string; request_id: string; kind: MissionKind; text: string; position: number; task?: MissionTask }
  | { type: 'mission_started'; mission_id: string; request_id: string; kind: MissionKind; text: string; task?: MissionTask }
  | { type: 'assistant_delta'; mission_id: string; text: string }
  | { type: 'assistant_message_end'; mission_id: string; stop_reason: string | null; usage: Usage }
  /** `detail`: what the tool was given (a command as itself, else its input as JSON), for the details view. */
  | { type: 'tool_started'; mission_id: string; tool_use_id: string; name: string; title: string; detail?: string }
  | {
      type: 'tool_finished';
      mission_id: string;
      tool_use_id: string;
      name: string;
      ok: boolean;
      summary: string;
      /** The result the model read, when longer than the summary (at most 16,000 characters). */
      output?: string;
    }
  /** `window`, for a document a window can show: whether one opened for it (only a few open by themselves). */
  | { type: 'document_added'; document: DocumentInfo; window?: boolean }
  | { type: 'document_updated'; document: DocumentInfo }
  | { type: 'document_progress'; document_id: string; page: number; pages: number }
  | { type: 'file_ready'; mission_id: string | null; path: string; mime: string; size: number }
  | { type: 'context_compacted'; mission_id: string; removed_messages: number; prompt_tokens: number }
  | { type: 'model_retry'; mission_id: string; attempt: number; delay_ms: number; reason: string }
  | { type: 'mission_finished'; mission_id: string; status: MissionStatus; usage: Usage; error?: ErrorShape }
  | { type: 'window_opened'; window: CanvasWindow }
  | { type: 'window_patched'; window_id: string; patch: WindowPatch; updated_at: number }
  | { type: 'window_closed'; window_id: string }
  | { type: 'settings_changed'; settings: Settings }
  | { type: 'trust_changed'; trust: TrustState | null }
  | {
      type: 'permission_decision';
      mission_id: string;
      tool: string;
      title: string;
      decision: 'allowed' | 'denied';
      rule_id?: string;
      reason?: string;
    }
  | { type: 'permission_requested'; ask_id: string; mission_id: string; tool: string; title: string; rule_id: string; reason: string }
  | { type: 'permission_rules_changed'; rules: PermissionRule[] }
  /** A hook ran: logged in the transcript and shown in the chat; `tool_use_id` and `tool` for tool events. */
  | { type: 'hook_ran'; mission_id: string; tool_use_id?: string; tool?: string; run: HookRun }
  | { type: 'mcp_changed'; mcp: McpInfo }
  | { type: 'model_status'; status: ModelStatus }
  | { type: 'computer_status'; status: ComputerStatus }
  /** A scheduled task was created or changed, or one of its runs moved on. */
  | { type: 'task_changed'; task: TaskInfo }
  | { type: 'task_removed'; task_id: string }
  /** A checkpoint was taken (`checkpoint`), or one failed (`error`); the timeline asks for the list again. */
  | { type: 'checkpoint_taken'; checkpoint: CheckpointInfo }
  | { type: 'checkpoint_failed'; mission_id: string | null; error: ErrorShape }
  /** A subagent started, moved on (its activity, its spend) or ended. */
  | { type: 'subagent_changed'; subagent: SubagentInfo }
  /** A step of a subagent's work, for its transcript on the task board. */
  | { type: 'subagent_step'; mission_id: string; subagent_id: string; step: SubagentStep }
  /** A slice of a running tool's output (bash), for the chat's tool details; coalesced. */
  | { type: 'tool_output'; mission_id: string; tool_use_id: string; stream: 'stdout' | 'stderr'; text: string };

/**
 * What the app asks of the computer: `download` fetches the rest of its system image into this
 * browser (so it works offline) without starting it, e.g. once the app is installed.
 */
export type ComputerAction = 'start' | 'suspend' | 'reboot' | 'reset' | 'save' | 'download' | 'rest';

/**
 * The computer's state as the UI shows it. `progress` is 0..1 when known (image download,
 * boot). `wake_ms`: how long the last wake or boot took, shown to the user. `offline`: how much
 * of its system image this browser holds (0..1; 1: it works offline), once known.
 */
export type ComputerStatus = (
  | { state: 'unavailable'; message: string }
  | { state: 'off' }
  | { state: 'downloading'; progress: number; detail: string }
  | { state: 'booting'; detail: string }
  | { state: 'waking' }
  | { state: 'ready'; woke: boolean; wake_ms: number | null }
  | { state: 'suspended' }
  | { state: 'error'; message: string; can_reboot: boolean }
) & { offline?: number };

export type StackEvent = StackEventBody & { seq: number; at: number };
export type StackEventType = StackEvent['type'];

// ---------------------------------------------------------------------------------------------
// The API a stack worker exposes over comlink

export type EventListener = (events: StackEvent[]) => void;

export interface StackApi {
  /** Must not throw: every failure comes back as `{ok: false, error}`. */
  request<M extends Method>(request: StackRequest<M>): Promise<StackResponse<M>>;
  /**
   * Delivers every event with `seq > afterSeq` (those already logged first, in order), then
   * each new batch as it happens. Returns the last seq delivered so far.
   */
  subscribe(afterSeq: number, listener: EventListener): Promise<{ last_seq: number }>;
  /** What the canvas shows now: open windows, current settings and model status. */
  snapshot(): Promise<StackSnapshot>;
  /** The serial root shell's output (a Comlink.proxy): bytes from now on. */
  subscribeTerminal(listener: (bytes: Uint8Array) => void): Promise<void>;
  /** Keystrokes for the serial root shell. */
  terminalInput(bytes: Uint8Array): Promise<void>;
  /** The terminal window's size, so full-screen programs fit (stty on the guest side). */
  terminalResize(cols: number, rows: number): Promise<void>;
}

export interface StackSnapshot {
  windows: CanvasWindow[];
  settings: Settings;
  /** Null for a stack made here; else where it came from and what it brought. */
  trust: TrustState | null;
  model: ModelStatus;
  computer: ComputerStatus;
  last_seq: number;
}

// ---------------------------------------------------------------------------------------------
// The stacks worker: every stack in this browser (folders under OPFS `stacks/`), for the switcher

/** The Web Lock a tab holds while it shows a stack; the stacks worker takes it to copy or delete one. */
export function stackLockName(stackId: string): string {
  return `stackdocs:stack:${stackId}`;
}

export interface StackSummary {
  id: string;
  name: string;
  /** The sum of the sizes of the files in its folder (databases, user files, the computer's). */
  bytes: number;
}

/** The stacks and the origin's storage: `usage` and `quota` from the browser, null when it does not say. */
export interface StacksReport {
  stacks: StackSummary[];
  usage: number | null;
  quota: number | null;
}

export type StacksResult<T> = { ok: true; value: T } | { ok: false; error: ErrorShape };

/** One part of what an export would carry, as the export dialog lists it. */
export interface ExportPart {
  kind: 'conversation' | 'memory' | 'files' | 'computer' | 'settings' | 'skills' | 'rules' | 'hooks' | 'mcp';
  /** In plain words, naming what is in it ("Skills: weekly, invoices", "/workspace/documents/: 3 files"). */
  label: string;
  files: number;
  /** Of the files as they are now; with `bytes_known` false, some are held open by the stack and not counted. */
  bytes: number;
  bytes_known: boolean;
}

/** What an export of a stack would hold, asked before it is written, and the secrets it leaves out unless ticked. */
export interface ExportContents {
  parts: ExportPart[];
  /** MCP servers' header and env values ("MCP server 'github': env GITHUB_TOKEN"): ids to hand back in `includeSecrets`. */
  secrets: { id: string; label: string }[];
}

/** What the stacks worker offers the app (comlink). Every method answers with a result; none rejects. */
export interface StacksApi {
  /** `names`: the app's earlier list of names (ids to names), recorded for stacks that have none. */
  list(names?: { id: string; name: string }[]): Promise<StacksResult<StacksReport>>;
  create(name: string): Promise<StacksResult<StackSummary>>;
  rename(stackId: string, name: string): Promise<StacksResult<StackSummary>>;
  /**
   * Refused with code `storage` (a message naming both sizes) when a copy of the stack will not
   * fit, with `busy` when it is open in another tab; else null. Asked before closing the open stack.
   */
  checkDuplicate(stackId: string, options: { heldByCaller: boolean }): Promise<StacksResult<null>>;
  /**
   * Copies the stack's folder, every file of it, into a new stack named `name`. The stack must be
   * still: either not open anywhere (its Web Lock is taken for the copy) or `heldByCaller`: the
   * caller holds its lock and closed its worker first.
   */
  duplicate(stackId: string, name: string, options: { heldByCaller: boolean }): Promise<StacksResult<StackSummary>>;
  /** Deletes the stack's folder; refused for the last stack and for a stack open in another tab. */
  remove(stackId: string, options: { heldByCaller: boolean }): Promise<StacksResult<{ freed: number }>>;
  /**
   * Writes the stack as one `.stack` file (docs/stack-file.md). The caller holds its lock and
   * closes it with `close {snapshot: true}`, first or meanwhile: `whenStill` resolves once that is
   * done, and the files the closing leaves alone are packed in the meantime. `target`: a file the user picked (File System
   * Access); null: the file is made in this origin's storage and handed back to be downloaded.
   * `job` names it for `cancel`; `onProgress` hears bytes done of the total. `template`: a
   * template of the stack instead (its makings, none of its history, uploads or secrets), named
   * and described so; the stack may stay open for that. `includeSecrets`: ids from
   * `exportContents` of MCP header and env values to carry; every other one is left out.
   */
  exportStack(
    stackId: string,
    options: { layout: string | null; target: FileSystemFileHandle | null; job: string; template?: { name: string; description: string }; includeImage?: boolean; includeSecrets?: string[] },
    onProgress?: (done: number, total: number) => void,
    whenStill?: () => Promise<void>,
  ): Promise<StacksResult<{ name: string; bytes: number; file: File | null }>>;
  /** What `exportStack` would write of the stack (open or not), and the secrets it leaves out unless named in `includeSecrets`. */
  exportContents(stackId: string): Promise<StacksResult<ExportContents>>;
  /**
   * Makes a new stack from a `.stack` file (or a template), named `name` or as the file says;
   * refused (with why) unless every check passes, leaving nothing. The new stack opens restricted
   * (worker/trust.ts) unless `builtIn`: a template the app itself ships.
   */
  importStack(file: Blob, options: { job: string; name?: string; fileName?: string; builtIn?: boolean; allowLarge?: boolean }, onProgress?: (done: number, total: number) => void): Promise<StacksResult<{ stack: StackSummary; layout: string | null }>>;
  /**
   * Kiosk mode: `saveResetPoint` copies the still stack whole as what every visitor starts from;
   * `resetToPoint` makes it exactly that again (the visitor's chat, uploads, windows, memory and
   * files gone); `dropResetPoint` forgets it. The caller holds the stack's lock (`heldByCaller`)
   * or the stack is open nowhere.
   */
  saveResetPoint(stackId: string, options: { heldByCaller: boolean }): Promise<StacksResult<{ bytes: number }>>;
  resetToPoint(stackId: string, options: { heldByCaller: boolean }): Promise<StacksResult<{ bytes: number }>>;
  dropResetPoint(stackId: string): Promise<StacksResult<null>>;
  /**
   * Makes the still stack what it was at checkpoint `checkpointId` (the caller holds its lock
   * and closed its worker), keeping it as it is now as a checkpoint first (`layout`: its window
   * places then). Returns the checkpoint's layout.
   */
  restoreCheckpoint(stackId: string, checkpointId: string, options: { heldByCaller: boolean; layout: string | null }): Promise<StacksResult<{ layout: string | null }>>;
  /** Makes a new stack named `name` of a checkpoint of a stack (open or not), leaving that stack as it is. */
  stackFromCheckpoint(stackId: string, checkpointId: string, name: string): Promise<StacksResult<{ stack: StackSummary; layout: string | null }>>;
  /** Stops an export or import under way; it then fails with code `aborted`. */
  cancel(job: string): Promise<void>;
  /** Removes the file an export made for downloading, once the page has it. */
  forgetExport(): Promise<void>;
}

/**
 * Applies a patch and returns the new window (the input is not changed). Returns the window as it
 * was when the patch does not fit its kind; validation happens before a patch is emitted.
 */
export function applyWindowPatch<W extends CanvasWindow>(win: W, patch: WindowPatch, updatedAt: number): W {
  switch (patch.op) {
    case 'set': {
      const { op: _op, ...fields } = patch;
      const defined = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
      return { ...win, ...defined, updated_at: updatedAt };
    }
    case 'set_columns':
      return win.kind === 'table' ? { ...win, columns: patch.columns, updated_at: updatedAt } : win;
    case 'upsert_rows': {
      if (win.kind !== 'table') return win;
      const rows = [...win.rows];
      const index = new Map(rows.map((row, i) => [row.id, i]));
      for (const row of patch.rows) {
        const at = index.get(row.id);
        if (at === undefined) {
          index.set(row.id, rows.length);
          rows.push(row);
        } else {
          const before = rows[at]!;
          const uncertain = row.uncertain ?? before.uncertain;
          rows[at] = { id: row.id, cells: { ...before.cells, ...row.cells }, ...(uncertain && Object.keys(uncertain).length ? { uncertain } : {}) };
        }
      }
      return { ...win, rows, updated_at: updatedAt };
    }
    case 'delete_rows': {
      if (win.kind !== 'table') return win;
      const gone = new Set(patch.row_ids);
      return { ...win, rows: win.rows.filter((row) => !gone.has(row.id)), updated_at: updatedAt };
    }
    default:
      return assertNever(patch, 'window patch');
  }
}

/**
 * "0 bytes", "12 KB", "3.4 MB", "2.2 GB" (decimal units, as browsers word storage): how a size
 * reads in the worker's messages and on the screen alike.
 */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${Math.max(0, Math.round(bytes))} bytes`;
  if (bytes < 999_500) return `${Math.round(bytes / 1e3)} KB`;
  if (bytes < 9_950_000) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes < 999_500_000) return `${Math.round(bytes / 1e6)} MB`;
  return `${(bytes / 1e9).toFixed(1)} GB`;
}

/** For exhaustive switches over the unions above: a compile error when a case is missing. */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`Unexpected ${what}: ${JSON.stringify(value)}`);
}
