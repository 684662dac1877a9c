// The agent's tools in a stack, each given the parts of the stack it works on: the canvas, the
// user's files, the computer (bash), memory, skills, the stack's documents, the web through the
// proxy, permission rules, scheduled tasks, downloads and checkpoints.
import type { StackMemory } from '../memory/index.ts';
import type { StackEventBody } from '../protocol/events.ts';
import type { Settings } from '../protocol/settings.ts';
import type { AgentTool } from './agent/types.ts';
import type { AgentMemory } from './agent-memory.ts';
import type { Canvas } from './canvas.ts';
import type { Checkpoints } from './checkpoints/checkpoints.ts';
import { ComputerUnavailableError, type Computer } from './computer.ts';
import { findDocument } from './documents/find-document.ts';
import { readWords } from './documents/pipeline.ts';
import type { PermissionGate } from './permissions/gate.ts';
import type { Skills } from './skills.ts';
import type { Scheduler } from './tasks.ts';
import { createAddPermissionRuleTool } from './tools/add-permission-rule.ts';
import { createBashTool } from './tools/bash.ts';
import { createListCheckpointsTool, createProposeRestoreTool } from './tools/checkpoints.ts';
import { createCloseWindowTool } from './tools/close-window.ts';
import { createCreateWindowTool } from './tools/create-window.ts';
import { createEditTool } from './tools/edit.ts';
import { createExportFileTool } from './tools/export-file.ts';
import { createGlobTool } from './tools/glob.ts';
import { createGrepTool } from './tools/grep.ts';
import { createLoadSkillTool } from './tools/load-skill.ts';
import { createReadOcrTool } from './tools/read-ocr.ts';
import { createReadTool } from './tools/read.ts';
import { createSaveExtractionTool } from './tools/save-extraction.ts';
import { createSaveSkillTool } from './tools/save-skill.ts';
import { createScheduleTaskTool } from './tools/schedule-task.ts';
import { createSearchMemoryTool } from './tools/search-memory.ts';
import { createUpdateWindowTool } from './tools/update-window.ts';
import { createProxyFetchPage, createWebFetchTool } from './tools/web-fetch.ts';
import { createProxySearch, createWebSearchTool } from './tools/web-search.ts';
import { createWriteTool } from './tools/write.ts';
import type { UserFiles } from './user-files.ts';

export interface StackToolParts {
  canvas: Canvas;
  /** The user space, telling the computer of each change. */
  files: UserFiles;
  computer: Computer | undefined;
  /** A running tool's output as it comes, for the chat. */
  output(toolUseId: string, stream: 'stdout' | 'stderr', text: string): void;
  databases: StackMemory;
  memory: AgentMemory;
  skills: Skills;
  gate: PermissionGate;
  settings: () => Settings;
  proxyFetch: typeof fetch;
  /** The scheduler, made after the missions that use these tools. */
  tasks: () => Scheduler;
  /** The mission whose tools run now. */
  mission: () => string | null;
  emit(event: StackEventBody): void;
  checkpoints: Checkpoints | null;
}

export function createStackTools(parts: StackToolParts): AgentTool[] {
  const { canvas, files, computer, databases, settings } = parts;
  const proxyEndpoint = () => (settings().provider === 'proxy' ? settings().endpoint : null);
  const tools = [
    createCreateWindowTool({ openWindow: canvas.openWindow, get: canvas.get, fileType: async (path) => (await files.stat(path))?.mime ?? null }),
    createUpdateWindowTool(canvas),
    createCloseWindowTool(canvas),
    createBashTool({
      exec: async (request, options) => {
        if (!computer) throw new ComputerUnavailableError('This stack has no computer: bash cannot run here.');
        return computer.exec(request, options);
      },
      output: parts.output,
      saveOutput: async (toolUseId, text) => (await files.write(`artifacts/tool-output/${toolUseId}.txt`, text)).path,
    }),
    createReadTool(files),
    createWriteTool(files),
    createEditTool(files),
    createGlobTool(files),
    createGrepTool(files),
    createSearchMemoryTool(parts.memory.search),
    createLoadSkillTool(parts.skills),
    createSaveSkillTool(parts.skills),
    createReadOcrTool({ findDocument: (nameOrId) => findDocument(databases, nameOrId), files }),
    createSaveExtractionTool({
      findDocument: (nameOrId) => findDocument(databases, nameOrId),
      documents: databases.documents,
      get: canvas.get,
      windows: canvas.windows,
      openWindow: canvas.openWindow,
      patchWindow: canvas.patchWindow,
      words: (documentId) => readWords(files, documentId),
    }),
    createWebFetchTool({ fetchPage: createProxyFetchPage(proxyEndpoint, parts.proxyFetch) }),
    createWebSearchTool({ search: createProxySearch({ endpoint: proxyEndpoint, fetch: parts.proxyFetch }) }),
    createAddPermissionRuleTool(parts.gate),
    createScheduleTaskTool({ create: (input) => parts.tasks().create(input) }),
    createExportFileTool({ get: canvas.get, files, offerDownload: (file) => parts.emit({ type: 'file_ready', mission_id: parts.mission(), ...file }) }),
  ];
  const checkpoints = parts.checkpoints;
  if (!checkpoints) return tools;
  return [
    ...tools,
    createListCheckpointsTool(() => checkpoints.list()),
    createProposeRestoreTool(async (checkpointId, reason) => {
      const known = (await checkpoints.list()).checkpoints.some((checkpoint) => checkpoint.id === checkpointId);
      if (!known) throw new Error(`there is no checkpoint ${checkpointId}; list_checkpoints names them`);
      const proposed = { checkpoint_id: checkpointId, reason };
      const open = canvas.windows().find((win) => win.kind === 'timeline');
      if (open) await canvas.patchWindow(open.id, { op: 'set', proposed });
      else await canvas.openWindow({ kind: 'timeline', title: 'Timeline', proposed });
    }),
  ];
}

