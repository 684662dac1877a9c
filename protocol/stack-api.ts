// The API one stack worker offers the page (comlink): requests `{id, method, params}` answered by
// `{request_id, ok, result | error}`, events by subscription, the terminal's bytes.

import type { CheckpointInfo, CheckpointList } from './checkpoints.ts';
import type { ComputerAction, ComputerNetworkUse, ComputerStatus } from './computer.ts';
import type { DocumentInfo, OcrLanguageChoice } from './documents.ts';
import type { ErrorShape } from './errors.ts';
import type { EventListener } from './events.ts';
import type { HooksInfo } from './hooks.ts';
import type { McpInfo } from './mcp.ts';
import type { NewPermissionRule, PermissionRule } from './permissions.ts';
import type { ModelStatus, Settings, SettingsPatch } from './settings.ts';
import type { SkillDetail, SkillInfo } from './skills.ts';
import type { TaskInfo, TaskScheduleInput } from './tasks.ts';
import type { TrustState } from './trust.ts';
import type { CanvasInteraction, CanvasWindow } from './windows.ts';

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

/**
 * What each request is beside its shape, said once here so no file switches on method names:
 * `notDone` words a failure for the user ("Your message was not saved: …"); `warmsOcr` says an
 * image being uploaded will be read, so the worker may start its OCR engine before it answers;
 * `transfers` names the bytes of a result that move to the page rather than being copied.
 */
export interface RequestTraits<M extends Method> {
  notDone(params: ParamsOf<M>): string;
  warmsOcr?(params: ParamsOf<M>): boolean;
  transfers?(result: ResultOf<M>): ArrayBuffer[];
}

/** The names of the images the pipeline reads with OCR (PNG, JPEG, WebP, TIFF). */
const SCAN_NAME = /\.(png|jpe?g|webp|tiff?)$/i;

const said = (words: string) => () => words;

export const REQUESTS: { [M in Method]: RequestTraits<M> } = {
  mission: { notDone: said('Your message was not saved') },
  heartbeat: { notDone: said('The heartbeat did not start') },
  play_demo: { notDone: said('The demo did not start') },
  abort: { notDone: said('The work was not stopped') },
  get_settings: { notDone: said('The settings could not be read') },
  update_settings: { notDone: said('The settings were not saved') },
  check_model: { notDone: said('The model was not checked') },
  pair_device: { notDone: said('This browser was not paired') },
  unpair_device: { notDone: said('This browser was not unpaired') },
  canvas_interaction: { notDone: said('What you did on the canvas was not saved') },
  answer_permission: { notDone: said('Your answer was not saved') },
  list_permission_rules: { notDone: said('The permission rules could not be read') },
  add_permission_rule: { notDone: said('The rule was not added') },
  remove_permission_rule: { notDone: said('The rule was not removed') },
  get_heartbeat_checklist: { notDone: said("The heartbeat's checklist could not be read") },
  save_heartbeat_checklist: { notDone: said("The heartbeat's checklist was not saved") },
  list_skills: { notDone: said('The skills could not be read') },
  install_skill: { notDone: (params) => (params?.dry_run ? 'The skill was not checked' : 'The skill was not installed') },
  remove_skill: { notDone: said('The skill was not removed') },
  list_tasks: { notDone: said('The tasks could not be read') },
  update_task: { notDone: said('The task was not changed') },
  run_task: { notDone: said('The task did not run') },
  delete_task: { notDone: said('The task was not deleted') },
  get_hooks: { notDone: said('The hooks could not be read') },
  save_hooks: { notDone: said('The hooks were not saved') },
  get_mcp: { notDone: said('The MCP servers could not be read') },
  save_mcp: { notDone: said('The MCP servers were not saved') },
  restart_mcp: { notDone: said('The MCP server was not restarted') },
  learn_now: { notDone: said('Nothing was learned') },
  upload_file: {
    notDone: (params) => `${typeof params?.name === 'string' ? params.name : 'The file'} was not added`,
    warmsOcr: (params) => typeof params?.name === 'string' && SCAN_NAME.test(params.name),
  },
  export_window: { notDone: said('The table was not exported') },
  open_window: { notDone: said('The window was not opened') },
  list_checkpoints: { notDone: said('The checkpoints could not be read') },
  take_checkpoint: { notDone: said('The checkpoint was not taken') },
  delete_checkpoint: { notDone: said('The checkpoint was not deleted') },
  cancel_subagent: { notDone: said('The subagent was not stopped') },
  computer: { notDone: said('The computer did not do what was asked') },
  computer_network: { notDone: said("The computer's network use could not be read") },
  release_memory: { notDone: said('No memory was given back') },
  read_document_again: { notDone: said('The document was not read again') },
  read_file: {
    notDone: said('The file could not be read'),
    transfers: ({ bytes }) => (bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? [bytes.buffer] : []),
  },
  close: { notDone: said('The stack was not closed') },
  get_trust: { notDone: said('Where this stack came from could not be read') },
  review_trust: { notDone: said('Your review was not saved') },
};

/** The traits of a request as it came, whatever its method: one the stack does not know gets plain words. */
export function requestTraits(method: string): RequestTraits<Method> {
  if (Object.hasOwn(REQUESTS, method)) return REQUESTS[method as Method] as RequestTraits<Method>;
  return { notDone: () => `The request "${method}" was not done` };
}

export type StackRequest<M extends Method = Method> = {
  [K in M]: { id: string; method: K; params: ParamsOf<K> };
}[M];

export type StackResponse<M extends Method = Method> =
  | { request_id: string; ok: true; result: ResultOf<M> }
  | { request_id: string; ok: false; error: ErrorShape };

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
