// Properties of the upload checks over random names and bytes: a name always comes out as one
// safe path segment, and a file is either accepted with a type or refused with an UploadError.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normaliseUserPath, UserPathError } from '../user-files.ts';
import { checkUpload, safeFileName, UploadError } from './upload.ts';

/** Names as attackers write them: separators, dots, controls, bidi overrides, long runs. */
const hostileName = fc
  .array(fc.oneof(fc.string(), fc.constantFrom('..', '/', '\\', '\u0000', '\u202e', '.', ' ', 'x'.repeat(300), 'cod.exe', 'invoice.pdf', '\ud800')), { maxLength: 8 })
  .map((parts) => parts.join(''));

describe('upload checks, on random input', () => {
  it('safeFileName always gives one short, visible, safe segment', () => {
    fc.assert(
      fc.property(hostileName, (name) => {
        const safe = safeFileName(name);
        expect(safe.length).toBeGreaterThan(0);
        expect(safe.length).toBeLessThanOrEqual(150);
        expect(safe).not.toMatch(/[\\/\u0000-\u001f\u007f\u202a-\u202e\u2066-\u2069]/);
        expect(safe.isWellFormed()).toBe(true);
        expect(safe).not.toMatch(/^[.\s]/);
        expect(safe).not.toBe('..');
        // Whatever it is, it stays inside documents/.
        expect(normaliseUserPath(`documents/${safe}`)).toBe(`documents/${safe}`);
      }),
      { numRuns: 1000 },
    );
  });

  it('checkUpload accepts with a type or refuses with an UploadError, never anything else', async () => {
    await fc.assert(
      fc.asyncProperty(hostileName, fc.uint8Array({ maxLength: 2048 }), async (name, bytes) => {
        try {
          const checked = await checkUpload(name, bytes);
          expect(checked.mime).toMatch(/^[a-z]+\/[\w.+-]+$/);
          expect(checked.name).toBe(safeFileName(name));
        } catch (error) {
          expect(error).toBeInstanceOf(UploadError);
          expect((error as Error).message).toContain(safeFileName(name));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('normaliseUserPath returns a path inside user space or refuses with a UserPathError', () => {
    fc.assert(
      fc.property(hostileName, (path) => {
        try {
          const normal = normaliseUserPath(path);
          expect(normal.split('/')).not.toContain('..');
          expect(normal).not.toMatch(/^\/|\\|^\.os(\/|$)/);
        } catch (error) {
          expect(error).toBeInstanceOf(UserPathError);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
