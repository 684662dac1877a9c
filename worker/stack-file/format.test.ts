import { describe, expect, it } from 'vitest';
import { checkManifest, FORMAT, FORMAT_VERSION, IMPORT_CEILING_BYTES, importCeiling, nameClash, pathProblem, recipeOfImageBase, StackFileError, withChecksums, type ManifestChecks, type StackManifest } from './format.ts';

const SHA = 'a'.repeat(64);
const manifest = (patch: Partial<StackManifest> = {}): StackManifest => ({
  format: FORMAT,
  format_version: FORMAT_VERSION,
  app_version: '0.1.0',
  created_at: 1,
  stack: { name: 'Receipts' },
  image: { recipe: 'fd64fdc78ca0f2c7' },
  includes_image: false,
  entries: [
    { path: 'layout.json', size: 10, sha256: SHA },
    { path: 'stack/documents/invoice.pdf', size: 1000, sha256: SHA },
    { path: 'stack/.os/memory/memory.db', size: 2000, sha256: SHA },
  ],
  ...patch,
});
const roomy: ManifestChecks = { appImage: 'fd64fdc78ca0f2c7', estimate: { usage: 1_000, quota: 1_000_000_000 } };
const refusal = (text: string, checks = roomy) => {
  try {
    checkManifest(text, checks);
  } catch (error) {
    expect(error).toBeInstanceOf(StackFileError);
    return error as StackFileError;
  }
  throw new Error('the manifest was accepted');
};

describe('pathProblem', () => {
  it('accepts the manifest, the layout and plain paths inside the stack', () => {
    for (const path of ['manifest.json', 'layout.json', 'stack/documents/a b.pdf', 'stack/.os/vm/overlay.data', 'stack/.os/memory/transcript.db']) expect(pathProblem(path)).toBeNull();
  });

  it('refuses every path that could leave the stack, each saying why', () => {
    expect(pathProblem('stack/../../etc/passwd')).toBe('"stack/../../etc/passwd" leaves the stack (a path with "..")');
    expect(pathProblem('stack/documents/..')).toContain('leaves the stack');
    expect(pathProblem('/etc/passwd')).toBe('"/etc/passwd" is an absolute path');
    expect(pathProblem('C:/Windows/x')).toContain('is an absolute path');
    expect(pathProblem('stack\\..\\x')).toContain('uses "\\"');
    expect(pathProblem('stack//x')).toContain('is not a plain path');
    expect(pathProblem('stack/./x')).toContain('is not a plain path');
    expect(pathProblem('documents/x.pdf')).toBe('"documents/x.pdf" is outside the stack');
    expect(pathProblem('stack/a\u0000b')).toContain('control character');
  });

  it('refuses names that do not read as what they are: direction controls, decomposed forms, overlong', () => {
    expect(pathProblem('stack/documents/invoice\u202Efdp.exe')).toBe('"stack/documents/invoice?fdp.exe" has a character that changes the direction text is shown in, so its name would not read as what it is');
    for (const control of ['\u202A', '\u202D', '\u2066', '\u2069', '\u200E', '\u200F', '\u061C']) expect(pathProblem(`stack/a${control}b.txt`), control).toContain('changes the direction');
    expect(pathProblem('stack/cafe\u0301.txt')).toBe('"stack/cafe\u0301.txt" is not in Unicode\'s composed form (NFC): the same name could then be two different files');
    expect(pathProblem('stack/caf\u00e9.txt')).toBeNull();
    expect(pathProblem(`stack/${'a'.repeat(255)}`)).toBeNull();
    expect(pathProblem(`stack/${'a'.repeat(256)}`)).toContain('has a name longer than 255 bytes');
    // 128 two-byte letters: 256 bytes in 128 characters.
    expect(pathProblem(`stack/${'\u00e9'.repeat(128)}`)).toContain('has a name longer than 255 bytes');
    expect(pathProblem(`stack/${'abcdefgh/'.repeat(114)}x`)).toContain('is longer than 1024 bytes');
  });

  it('refuses files a stack never takes from outside: its record, secrets, journals', () => {
    expect(pathProblem('stack/.os/config/secrets.json')).toContain('never takes from outside');
    expect(pathProblem('stack/.os/config/stack.json')).toContain('never takes from outside');
    expect(pathProblem('stack/.os/memory/memory.db-journal')).toContain('never takes from outside');
    expect(pathProblem('stack/.os/snapshot/memory.db')).toContain('never takes from outside');
  });
});

describe('checkManifest', () => {
  it('accepts a good manifest', () => {
    expect(checkManifest(JSON.stringify(manifest()), roomy).stack.name).toBe('Receipts');
  });

  it('refuses what is not a stack file', () => {
    expect(refusal('not json').message).toBe('This is not a Stackdocs stack file: its manifest is not readable.');
    expect(refusal(JSON.stringify({ format: 'zip' })).message).toContain('does not say "stackdocs-stack"');
  });

  it('refuses an unknown format version, naming both', () => {
    expect(checkManifest(JSON.stringify(manifest({ format_version: 1 })), roomy).format_version).toBe(1);
    const error = refusal(JSON.stringify(manifest({ format_version: 99 })));
    expect(error.code).toBe('format_version');
    expect(error.message).toBe('This stack file is format version 99; this version of Stackdocs reads format versions 1 and 2 only. Open it in a newer Stackdocs.');
  });

  it('refuses a manifest with a hostile or repeated path before anything is written', () => {
    const entries = (path: string) => [...manifest().entries, { path, size: 1, sha256: SHA }];
    expect(refusal(JSON.stringify(manifest({ entries: entries('stack/../x') }))).message).toBe('This stack file is refused: "stack/../x" leaves the stack (a path with "..").');
    expect(refusal(JSON.stringify(manifest({ entries: entries('/stack/x') }))).message).toBe('This stack file is refused: "/stack/x" is an absolute path.');
    expect(refusal(JSON.stringify(manifest({ entries: entries('stack/documents/invoice.pdf') }))).message).toContain('is listed twice');
    expect(refusal(JSON.stringify(manifest({ entries: entries('manifest.json') }))).message).toContain('cannot be listed');
  });

  it('refuses a damaged manifest with the field at fault', () => {
    const bad = manifest();
    (bad.entries[1] as { sha256: string }).sha256 = 'xyz';
    expect(refusal(JSON.stringify(bad)).message).toMatch(/^This stack file's manifest is damaged \(entries\.1\.sha256: /);
  });

  it('refuses a stack made over another system image, naming both', () => {
    const error = refusal(JSON.stringify(manifest({ image: { recipe: '0123456789abcdef' } })));
    expect(error.code).toBe('image');
    expect(error.message).toContain('system image 0123456789abcdef');
    expect(error.message).toContain('this Stackdocs has system image fd64fdc78ca0f2c7');
    expect(refusal(JSON.stringify(manifest()), { ...roomy, appImage: null }).message).toContain('this Stackdocs has no system image');
  });

  it('accepts a stack whose computer never started in any app', () => {
    expect(checkManifest(JSON.stringify(manifest({ image: { recipe: null } })), { ...roomy, appImage: null }).image.recipe).toBeNull();
  });

  it('refuses what will not fit in the free room, naming both sizes', () => {
    const huge = manifest({ entries: [{ path: 'stack/.os/vm/overlay.data', size: 5e12, sha256: SHA }] });
    const error = refusal(JSON.stringify(huge));
    expect(error.code).toBe('storage');
    expect(error.message).toBe("The stack was not imported: it needs 5000.0 GB and the browser's storage for Stackdocs has 1.0 GB left (it holds 1 KB). Delete documents or stacks you no longer need, or free space on this device, then try again.");
  });
});

describe('nameClash', () => {
  it('refuses paths that cannot all be files of one folder', () => {
    expect(nameClash(['stack/a.txt', 'stack/b/c.txt', 'layout.json'])).toBeNull();
    expect(nameClash(['stack/Invoice.pdf', 'stack/invoice.pdf'])).toBe('"stack/Invoice.pdf" and "stack/invoice.pdf" differ only by case');
    expect(nameClash(['stack/Docs/a.txt', 'stack/docs/b.txt'])).toBe('"stack/Docs" and "stack/docs" differ only by case');
    expect(nameClash(['stack/docs', 'stack/docs/b.txt'])).toBe('"stack/docs" is both a file and the folder of "stack/docs/b.txt"');
    expect(nameClash(['stack/a', 'stack/a'])).toBe('"stack/a" is listed twice');
  });

  it('is checked on the manifest before anything is written', () => {
    const entries = [...manifest().entries, { path: 'stack/Documents/invoice.pdf', size: 1, sha256: SHA }];
    expect(refusal(JSON.stringify(manifest({ entries }))).message).toBe('This stack file is refused: "stack/documents" and "stack/Documents" differ only by case.');
  });
});

describe('a computer that never started', () => {
  it('carries none of the computer\'s files', () => {
    const entries = [...manifest().entries, { path: 'stack/.os/vm/overlay.data', size: 10, sha256: SHA }];
    expect(refusal(JSON.stringify(manifest({ image: { recipe: null }, entries }))).message).toBe('This stack file is refused: it says its computer never started (no system image), yet it carries the computer\'s files ("stack/.os/vm/overlay.data").');
    expect(checkManifest(JSON.stringify(manifest({ entries })), roomy).entries).toHaveLength(4);
  });
});

describe('the import ceiling', () => {
  const sized = (size: number) => JSON.stringify(manifest({ entries: [{ path: 'stack/.os/vm/overlay.data', size, sha256: SHA }] }));

  it('is half the room left, at most 4 GiB', () => {
    expect(importCeiling({ usage: 1_000, quota: 1_000_001_000 })).toBe(500_000_000);
    expect(importCeiling({ usage: 0, quota: 100e9 })).toBe(IMPORT_CEILING_BYTES);
    expect(importCeiling(undefined)).toBe(IMPORT_CEILING_BYTES);
  });

  it('refuses a stack over it that would fit, naming both sizes, until the user says yes', () => {
    const error = refusal(sized(600_000_000));
    expect(error.code).toBe('too_large');
    expect(error.message).toBe(
      'This stack unpacks to 600 MB, more than a stack file may take without asking (500 MB: half the room this browser has left for Stackdocs, at most 4.0 GB). Nothing was written. Import it anyway only if you expected a stack this large.',
    );
    expect(checkManifest(sized(600_000_000), { ...roomy, allowLarge: true }).entries[0]!.size).toBe(600_000_000);
    // What does not fit at all is refused whatever the user says.
    expect(refusal(sized(2e9), { ...roomy, allowLarge: true }).code).toBe('storage');
    // A 5 GB stack in a browser that does not say how much room it has.
    expect(refusal(sized(5e9), { ...roomy, estimate: undefined }).code).toBe('too_large');
  });
});

describe('recipeOfImageBase', () => {
  it("reads the app's image recipe from where the build serves it", () => {
    expect(recipeOfImageBase('vm/fd64fdc78ca0f2c7/')).toBe('fd64fdc78ca0f2c7');
    expect(recipeOfImageBase('/vm/fd64fdc78ca0f2c7/')).toBe('fd64fdc78ca0f2c7');
    expect(recipeOfImageBase(null)).toBeNull();
  });
});

describe('withChecksums', () => {
  const bare = manifest({ entries: [{ path: 'layout.json', size: 10 }, { path: 'stack/notes.txt', size: 3, sha256: SHA }] });
  const B = 'b'.repeat(64);

  it("takes an entry's sha256 from the manifest, else from checksums.json", () => {
    expect(withChecksums(bare, JSON.stringify({ sha256: { 'layout.json': B, 'stack/notes.txt': B } })).entries.map((entry) => entry.sha256)).toEqual([B, SHA]);
  });

  it('refuses an entry left without one, and a list that is not one', () => {
    expect(() => withChecksums(bare, null)).toThrow('This stack file is damaged: "layout.json" has no checksum (its list of checksums, at its end, is missing).');
    expect(() => withChecksums(bare, JSON.stringify({ sha256: { 'layout.json': 'nope' } }))).toThrow('This stack file is damaged: "layout.json" has no checksum.');
    expect(() => withChecksums(bare, '[1, 2')).toThrow('This stack file is damaged: its list of checksums is not readable.');
    expect(() => withChecksums(bare, JSON.stringify({ sha256: ['x'] }))).toThrow('its list of checksums is not readable');
  });

  it('never lets checksums.json be listed as a file of the stack', () => {
    expect(refusal(JSON.stringify(manifest({ entries: [{ path: 'checksums.json', size: 1 }] }))).message).toBe('This stack file is refused: "checksums.json" cannot be listed.');
  });
});

describe('a file that includes its system image', () => {
  const withImage = (patch: Partial<StackManifest> = {}) =>
    manifest({
      image: { recipe: '0123456789abcdef' },
      includes_image: true,
      entries: [
        { path: 'stack/notes.txt', size: 3, sha256: SHA },
        { path: 'image/manifest.json', size: 900, sha256: SHA },
        { path: 'image/disk.bin', size: 9000, sha256: SHA },
      ],
      ...patch,
    });

  it('opens in an app with another image, and only then carries image files', () => {
    expect(checkManifest(JSON.stringify(withImage()), roomy).image.recipe).toBe('0123456789abcdef');
    expect(refusal(JSON.stringify(withImage({ includes_image: false }))).message).toBe('This stack file is refused: "image/manifest.json" is a system image\'s file in a file that includes none.');
    expect(refusal(JSON.stringify(withImage({ entries: [{ path: 'stack/notes.txt', size: 3, sha256: SHA }] }))).message).toBe('This stack file says it includes its system image, but it has none.');
  });

  it('takes only plain file names under image/', () => {
    expect(pathProblem('image/bzImage')).toBeNull();
    expect(pathProblem('image/disk/x')).toBe('"image/disk/x" is not a file of a system image');
    expect(pathProblem('image/.hidden')).toBe('"image/.hidden" is not a file of a system image');
  });
});
