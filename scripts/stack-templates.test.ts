import { createHash } from 'node:crypto';
import { unzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { applyWindowPatch, type CanvasWindow } from '../protocol/windows.ts';
import { parseSkill } from '../worker/skills.ts';
import { checkManifest, MANIFEST_NAME } from '../worker/stack-file/format.ts';
import { CANVAS_PATH, inTemplate } from '../worker/stack-file/template.ts';
import { buildTemplates } from './stack-templates.ts';

describe('the shipped stack templates', () => {
  const built = buildTemplates('9.9.9');

  it('are the three the stack menu offers, in its order', () => {
    expect(built.map(({ info }) => [info.slug, info.name, info.file])).toEqual([
      ['invoice-inbox', 'Invoice inbox', 'templates/invoice-inbox.stack'],
      ['research-notebook', 'Research notebook', 'templates/research-notebook.stack'],
      ['blank', 'Blank', 'templates/blank.stack'],
    ]);
    expect(built.every(({ info, bytes }) => info.bytes === bytes.byteLength && info.description.length > 20)).toBe(true);
  });

  it('each is a stack file an importer takes: the manifest first, every entry as listed, nothing a template leaves out', () => {
    for (const { info, bytes } of built) {
      const files = unzipSync(bytes);
      const names = Object.keys(files);
      expect(names[0]).toBe(MANIFEST_NAME);
      const manifest = checkManifest(new TextDecoder().decode(files[MANIFEST_NAME]), { appImage: 'abcdef12', estimate: undefined });
      expect(manifest.template?.description).toBe(info.description);
      expect(manifest.image.recipe).toBeNull();
      expect(names.slice(1)).toEqual(manifest.entries.map((entry) => entry.path));
      for (const entry of manifest.entries) {
        const data = files[entry.path]!;
        expect([entry.size, entry.sha256]).toEqual([data.byteLength, createHash('sha256').update(data).digest('hex')]);
        expect(inTemplate(entry.path.slice('stack/'.length)), entry.path).toBe(true);
      }
    }
  });

  it('carry skills that parse, and windows of kinds the canvas knows', async () => {
    const inbox = unzipSync(built[0]!.bytes);
    const skill = await parseSkill(new TextDecoder().decode(inbox['stack/.os/skills/weekly-payables/SKILL.md']), 'installed');
    expect(skill).toMatchObject({ name: 'weekly-payables', tools: ['create_window', 'update_window'] });
    const research = unzipSync(built[1]!.bytes);
    expect((await parseSkill(new TextDecoder().decode(research['stack/.os/skills/research-brief/SKILL.md']), 'installed')).name).toBe('research-brief');
    for (const files of [inbox, research]) {
      const canvas = JSON.parse(new TextDecoder().decode(files[`stack/${CANVAS_PATH}`])) as { version: number; windows: CanvasWindow[] };
      expect(canvas.version).toBe(1);
      for (const win of canvas.windows) expect(applyWindowPatch(win, { op: 'set', title: win.title }, 1)).toMatchObject({ kind: win.kind, updated_at: 1 });
    }
    expect(JSON.parse(new TextDecoder().decode(inbox[`stack/${CANVAS_PATH}`])).windows.map((w: CanvasWindow) => `${w.kind}:${w.title}`)).toEqual(['table:Invoices', 'notes:How this inbox works', 'tasks:Tasks']);
    expect(Object.keys(unzipSync(built[2]!.bytes))).toEqual([MANIFEST_NAME]);
  });

  it('are the same bytes from one build to the next', () => {
    expect(buildTemplates('9.9.9').map(({ bytes }) => createHash('sha256').update(bytes).digest('hex'))).toEqual(built.map(({ bytes }) => createHash('sha256').update(bytes).digest('hex')));
  });
});
